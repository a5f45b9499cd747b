(throw (RuntimeException. "boom"))
