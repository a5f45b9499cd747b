procedure Main is
   type Block is array (1 .. 1_000_000) of Character;
   type Ref is access Block;
   X : Ref;
begin
   loop
      X := new Block'(others => 'x');
   end loop;
end Main;
