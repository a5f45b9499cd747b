.mode list
SELECT 'hello';
CREATE TABLE input(line TEXT);
.import /dev/stdin input
SELECT line FROM input;
SELECT twice FROM (SELECT 2 * 21 AS twice);
SELECT * FROM missing_table;
