l = {};
while true
  l{end + 1} = ones(1, 125000);
end
