program p;
uses sysutils;
var i: integer;
begin
  for i := 0 to 2 do begin
    writeln('line ', i);
    sleep(1000);
  end;
end.
