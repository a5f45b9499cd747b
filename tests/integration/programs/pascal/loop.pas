program p;
begin
  while true do ;
end.
