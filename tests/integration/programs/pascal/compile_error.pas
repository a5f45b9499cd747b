program p;
begin
  undefined_name;
end.
