nap = (ms) -> Atomics.wait new Int32Array(new SharedArrayBuffer 4), 0, 0, ms
for i in [0..2]
  console.log "line #{i}"
  nap 1000
