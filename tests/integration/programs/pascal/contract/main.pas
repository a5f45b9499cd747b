program main;
uses util;
var s: string; i: integer; f: text;
begin
  writeln('hello');
  readln(s);
  for i := 1 to ParamCount do s := s + ' ' + ParamStr(i);
  writeln(s);
  assign(f, 'data.txt'); reset(f); readln(f, s); close(f);
  writeln(s);
  writeln(twice(21));
  writeln(StdErr, 'oops');
  halt(3);
end.
