loop { }
