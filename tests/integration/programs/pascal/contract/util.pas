unit util;
interface
function twice(x: integer): integer;
implementation
function twice(x: integer): integer;
begin
  twice := 2 * x;
end;
end.
