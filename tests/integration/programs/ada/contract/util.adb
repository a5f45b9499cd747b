package body Util is
   function Twice (X : Integer) return Integer is (2 * X);
end Util;
