while true
end
