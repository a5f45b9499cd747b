(car '())
