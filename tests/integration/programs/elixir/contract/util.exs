defmodule Util do
  def twice(x), do: 2 * x
end
