3.times { i ->
    println "line $i"
    sleep 1000
}
