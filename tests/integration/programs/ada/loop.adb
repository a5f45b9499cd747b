procedure Main is
begin
   loop
      null;
   end loop;
end Main;
