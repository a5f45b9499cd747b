def twice(x)
  2 * x
end
