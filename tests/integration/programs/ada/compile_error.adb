procedure Main is
begin
   Undefined_Name;
end Main;
