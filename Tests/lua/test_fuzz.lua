-- A short run of the random-program fuzzer (Tests/lua/fuzz/fuzz.lua) with fixed seeds, each in a
-- child bklua: random bk calls and callbacks that raise, cancel, invalidate, observe, re-enter,
-- yield and stop the loop must never crash or hang the process or break the state.
-- Longer runs: FUZZ_SEED=N FUZZ_PROGRAMS=M (the program that crashed is left in the LASTFILE).

local BKLUA = assert(os.getenv("BKLUA"), "BKLUA must name the bklua binary")
-- A memory ceiling for children (a runaway allocation fails instead of swapping); not under
-- sanitizers, which reserve terabytes of address space (scripts/check-sanitizers sets BK_NO_ULIMIT).
local ULIMIT = os.getenv("BK_NO_ULIMIT") and "" or "ulimit -v 4000000; "
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "Tests/lua"
local FUZZ = here .. "/fuzz/fuzz.lua"

local seeds = { 1, 2, 3 }
local programs = tonumber(os.getenv("FUZZ_PROGRAMS")) or 120
if os.getenv("FUZZ_SEED") then seeds = { tonumber(os.getenv("FUZZ_SEED")) } end

for _, seed in ipairs(seeds) do
  test("fuzz seed " .. seed .. ", " .. programs .. " programs", function()
    local last = os.tmpname()
    local out, code = shell(ULIMIT .. "timeout 300 " .. BKLUA .. " " .. FUZZ .. " " .. seed .. " "
      .. programs .. " " .. last)
    local f = io.open(last)
    local program = f and f:read("a") or "(none)"
    if f then f:close() end
    os.remove(last)
    local reason = code == 124 and "hung (killed after 300 s)"
      or code >= 128 and ("crashed (signal " .. (code - 128) .. ")")
      or code ~= 0 and ("exited with " .. code) or nil
    if reason or not out:find("fuzz ok", 1, true) then
      error("seed " .. seed .. ": " .. (reason or "no result line") .. "\n" .. out:sub(-2000)
        .. "\nlast program:\n" .. program)
    end
  end)
end
