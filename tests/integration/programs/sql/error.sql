SELECT * FROM missing_table;
