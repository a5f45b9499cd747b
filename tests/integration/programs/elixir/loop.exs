defmodule L do
  def f(n), do: f(n + 1)
end
L.f(0)
