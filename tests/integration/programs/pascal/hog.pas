program p;
var q: pointer;
begin
  while true do begin
    getmem(q, 1000000);
    fillchar(q^, 1000000, 1);
  end;
end.
