package Util is
   function Twice (X : Integer) return Integer;
end Util;
