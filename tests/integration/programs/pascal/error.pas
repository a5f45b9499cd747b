program p;
var a: integer;
begin
  a := 0;
  writeln(10 div a);
end.
