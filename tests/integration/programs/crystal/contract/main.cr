require "./util"
puts "hello"
line = (STDIN.gets || "").strip
puts ([line] + ARGV).join(" ")
puts File.read_lines("data.txt").first
puts twice(21)
STDERR.puts "oops"
exit 3
