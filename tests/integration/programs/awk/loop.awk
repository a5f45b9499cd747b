BEGIN { while (1) n++ }
