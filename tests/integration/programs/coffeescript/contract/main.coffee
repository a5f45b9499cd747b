fs = require "fs"
{ twice } = require "./util"
console.log "hello"
console.log [fs.readFileSync(0, "utf8").trim(), process.argv[2..]...].join " "
console.log fs.readFileSync("data.txt", "utf8").split("\n")[0]
console.log twice 21
console.error "oops"
process.exit 3
