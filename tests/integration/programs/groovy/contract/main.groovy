def util = new GroovyShell().parse(new File("util.groovy"))
println "hello"
def line = System.in.newReader().readLine().trim()
println(([line] + (args as List)).join(" "))
println new File("data.txt").readLines()[0]
println util.twice(21)
System.err.println "oops"
System.exit 3
