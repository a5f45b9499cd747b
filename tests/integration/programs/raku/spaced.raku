for ^3 -> $i {
    say "line $i";
    sleep 1;
}
