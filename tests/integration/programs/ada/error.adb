procedure Main is
begin
   raise Constraint_Error with "boom";
end Main;
