for i = 0:2
  printf("line %d\n", i);
  pause(1);
end
