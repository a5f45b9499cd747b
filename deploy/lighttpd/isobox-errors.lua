-- The errors lighttpd answers itself (a body over its cap, a malformed
-- request, the pool down or too slow) in isobox's JSON error shape, as
-- the worker answers its own. Run by mod_magnet at the start of every
-- response (magnet.attract-response-start-to): the worker's answers are
-- JSON already and pass untouched.
local r = lighty.r
local status = r.req_item.http_status
if status < 400 then
    return 0
end
local ctype = r.resp_header["Content-Type"] or ""
if ctype:find("application/json", 1, true) then
    return 0
end

local errors = {
    [400] = { "bad_request", "the web server refused the request as malformed" },
    [408] = { "request_timeout", "the request did not arrive in time" },
    [413] = { "body_too_large", "the request body is over the web server's limit" },
    [414] = { "uri_too_long", "the request line is over the web server's limit" },
    [431] = { "headers_too_large", "the request headers are over the web server's limit" },
    [502] = { "service_unavailable", "the isobox pool is not answering" },
    [503] = { "service_unavailable", "the isobox pool is not answering" },
    [504] = { "gateway_timeout", "the isobox pool did not answer in time" },
}
local e = errors[status] or { "server_error", "the web server failed to handle the request" }
r.resp_header["Content-Type"] = "application/json"
r.resp_header["Cache-Control"] = "no-store"
r.resp_body.set({ '{"error": {"code": "' .. e[1] .. '", "message": "' .. e[2] .. '"}}\n' })
-- Returning the status marks the new body complete (set() reopened it).
return status
