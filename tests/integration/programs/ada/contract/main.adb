with Ada.Text_IO; use Ada.Text_IO;
with Ada.Command_Line; use Ada.Command_Line;
with Ada.Strings.Unbounded; use Ada.Strings.Unbounded;
with Util;
procedure Main is
   S : Unbounded_String;
   F : File_Type;
begin
   Put_Line ("hello");
   S := To_Unbounded_String (Get_Line);
   for I in 1 .. Argument_Count loop
      Append (S, " " & Argument (I));
   end loop;
   Put_Line (To_String (S));
   Open (F, In_File, "data.txt");
   Put_Line (Get_Line (F));
   Close (F);
   Put_Line (Integer'Image (Util.Twice (21)) (2 .. 3));
   Put_Line (Standard_Error, "oops");
   Set_Exit_Status (3);
end Main;
