(loop)
