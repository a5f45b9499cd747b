3.times do |i|
  puts "line #{i}"
  sleep 1.second
end
