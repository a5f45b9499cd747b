WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT length(group_concat(hex(randomblob(1000)))) FROM c;
