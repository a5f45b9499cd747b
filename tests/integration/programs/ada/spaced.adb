with Ada.Text_IO; use Ada.Text_IO;
procedure Main is
begin
   for I in 0 .. 2 loop
      Put_Line ("line" & Integer'Image (I));
      delay 1.0;
   end loop;
end Main;
