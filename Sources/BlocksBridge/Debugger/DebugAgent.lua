-- The debugger's agent: runs on the stopped Lua thread, inside the hook (Debugger.c calls it in a
-- protected call), and answers the client's requests about that thread until it resumes. It reads
-- the script only with a private debug library and raw operations; what runs the script's code
-- (conditions, log messages, evaluate, setVariable) runs in a coroutine of its own, under a time
-- limit, and every error it raises is caught here. JSON bodies are written here and sent by the
-- Swift session (`host`), which also hands over the requests (`host.next()` blocks until one comes).
local c, host = ...
local debug = c.debug
local getinfo, getlocal, setlocal = debug.getinfo, debug.getlocal, debug.setlocal
local getupvalue, setupvalue, getmetatable = debug.getupvalue, debug.setupvalue, debug.getmetatable
local upvaluejoin = debug.upvaluejoin
local pcall, type, next, rawget, rawset, rawequal, rawlen = pcall, type, next, rawget, rawset, rawequal, rawlen
local setmetatable, load, tostring, tonumber = setmetatable, load, tostring, tonumber
local cocreate, coresume, costatus, coclose = coroutine.create, coroutine.resume, coroutine.status, coroutine.close
local corunning = coroutine.running
local format, sub, gsub, byte, match = string.format, string.sub, string.gsub, string.byte, string.match
local concat, sort, unpack = table.concat, table.sort, table.unpack
local mathtype, huge = math.type, math.huge
local utf8len = utf8.len

-- Frame ids and variables references start at ID_BASE (a worker state's agent has its own range,
-- which tells the session which stopped thread a request is for).
local ID_BASE = host.idBase or 0
-- The range's size: references past it would name the next slot's agent (a worker's), so a stop
-- that used them all refuses more (each stop starts again from 1).
local ID_RANGE = host.idRange or 1 << 20

local EVALUATION_SECONDS = 5  -- an evaluation (condition, watch, repl) that runs longer is stopped
local PAGE = 100              -- tables with more list elements than this are paged by the client

-- MARK: JSON

local ARRAY = {}
local function array(t) return setmetatable(t, ARRAY) end
local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
local function escape(ch) return escapes[ch] or format("\\u%04x", byte(ch)) end
local function quote(s)
    if utf8len(s) then return '"' .. gsub(s, '[%c"\\]', escape) .. '"' end
    return '"' .. gsub(s, '[%c"\\\128-\255]', escape) .. '"'  -- not UTF-8: bytes as code points
end
local function json(v)
    local t = type(v)
    if t == "string" then return quote(v)
    elseif t == "number" then
        if mathtype(v) == "integer" then return format("%d", v) end
        if v ~= v or v == huge or v == -huge then return "null" end
        return format("%.17g", v)
    elseif t == "boolean" then return v and "true" or "false"
    elseif t == "table" then
        local parts = {}
        if getmetatable(v) == ARRAY then
            for i = 1, #v do parts[i] = json(v[i]) end
            return "[" .. concat(parts, ",") .. "]"
        end
        for k, x in next, v do parts[#parts + 1] = quote(k) .. ":" .. json(x) end
        sort(parts)
        return "{" .. concat(parts, ",") .. "}"
    end
    return "null"
end

-- MARK: Describing values without running the script's code

-- At most n bytes of s, then "...". A cut inside a UTF-8 character backs up to its first byte: a
-- text that is no longer UTF-8 reaches the client with every byte above 127 escaped (mojibake).
local function clip(s, n)
    if #s <= n then return s end
    local cut = n
    while cut > 0 and cut > n - 3 do
        local b = byte(s, cut + 1)
        if b < 0x80 or b >= 0xC0 then break end  -- s[cut + 1] starts a character: cut before it
        cut = cut - 1
    end
    return sub(s, 1, cut) .. "..."
end

local function kindName(v)  -- a metatable's __name (raw, clipped), as bridged objects and bk kinds have
    local mt = getmetatable(v)
    local name = type(mt) == "table" and rawget(mt, "__name")
    return type(name) == "string" and clip(name, 200) or nil
end

-- What a table shows: a frozen view's contents (the view itself is empty), an observed table's raw
-- fields with the observed ones (moved to its proxy metatable's store), else the table itself.
-- Raw reads only: no __index or __pairs of the script's runs.
local function contentsOf(t)
    local frozen = c.frozenContents(t)
    if frozen ~= nil then return frozen end
    local mt = getmetatable(t)
    local store = type(mt) == "table" and rawget(mt, "__bkobserved")
    if type(store) ~= "table" then return t end
    local merged = {}
    for k, v in next, store do merged[k] = v end
    for k, v in next, t do merged[k] = v end  -- a raw field wins, as it does for t[k]
    return merged
end

local function address(v)
    return match(format("%p", v), "^0x0*(%x+)$") and format("%p", v) or "?"
end

-- A string as a client shows it: clipped, its control bytes as escapes (`\n`, `\0`).
local function readable(s, n)
    return (gsub(clip(s, n), "%c", function(ch) return escapes[ch] or format("\\%d", byte(ch)) end))
end

local function describe(v)
    local t = type(v)
    if t == "string" then
        return '"' .. readable(v, 400) .. '"'
    elseif t == "number" then
        if mathtype(v) == "integer" then return format("%d", v) end
        return format("%.14g", v)
    elseif t == "nil" or t == "boolean" then return tostring(v)
    elseif t == "function" then
        local info = getinfo(v, "S")
        if info.what == "C" then return "function: " .. address(v) .. " (C)" end
        return "function: " .. gsub(info.short_src, "^.*/", "") .. ":" .. info.linedefined
    elseif t == "table" then
        local n = 0
        for _ in next, contentsOf(v) do
            n = n + 1
            if n > 9999 then break end
        end
        return (kindName(v) or "table") .. ": " .. address(v) .. " (" .. (n > 9999 and "10000+" or n) .. ")"
    elseif t == "thread" then return "thread: " .. address(v)
    end
    return (kindName(v) or t) .. ": " .. address(v)
end

-- An error's text for `stopped` and exceptionInfo: clipped (a 20 MB message went out whole, twice).
local function errorText(e)
    if type(e) == "string" then return clip(e, 4000) end
    return "error object: " .. describe(e)
end

-- MARK: Frames of the stopped thread

local stop  -- the entry function, found on the stack to count levels from it
local frames, refs, refCount
-- A stop reads at most FRAMES_READ frames (each getinfo walks the stack from its top: reading them
-- all is O(depth^2), minutes for a stack overflow's 200,000); frames below them are read when a
-- request asks for them. `frameCount` is how many the stack shows: frames[i] for i past the ones
-- read is frame `unreadFrom + (i - #frames)`, not cached (no hidden frame is skipped down there).
local FRAMES_READ = 1000
local frameCount, unreadFrom
-- The thread the frames are on: nil for the running one (levels counted from `stop`), or a task's
-- or a script's coroutine that died of an error (post mortem: its stack as it was where the error
-- was raised).
local failedThread

-- The level, as seen by the caller of levelOf, of the function `offset` levels below `stop`.
local function levelOf(offset)
    local level = 2
    while true do
        local info = getinfo(level, "f")
        if not info then return nil end
        if rawequal(info.func, stop) then return level - 1 + offset end
        level = level + 1
    end
end

local function hiddenSource(source) return sub(source, 1, 4) == "=bk/" end

-- Debug info of the frame `offset` below `stop`, its caller's level of `stop` being `base` (no tail
-- call here or in its callers: a level must not lose a frame).
local function infoAt(base, offset, what)
    local info
    if failedThread then
        info = getinfo(failedThread, offset - 1, what)
    else
        info = getinfo(base + 1 + offset, what)
    end
    return info
end

local unreadFrames = { __index = function(_, i)
    i = type(i) == "number" and math.tointeger(i)
    if not i or i <= rawlen(frames) or i > frameCount then return nil end
    local offset = unreadFrom + (i - rawlen(frames))
    local info
    if failedThread then
        info = getinfo(failedThread, offset - 1, "nSlf")
    else
        local level = levelOf(offset)
        info = level and getinfo(level, "nSlf")
    end
    return info and { offset = offset, info = info } or nil
end }

local function collectFrames(skipLeadingC)
    frames = setmetatable({}, unreadFrames)
    local base = failedThread and -1 or levelOf(1) - 1  -- levels here: stop at base, the stopped function at base + 1
    local offset = 1
    while #frames < FRAMES_READ do
        local info = infoAt(base, offset, "nSlf")
        if not info then break end
        if hiddenSource(info.source) then
            -- Its callee's name is the bridge's own local (`by`, `block`): named by its place instead.
            local callee = frames[#frames]
            if callee and callee.offset == offset - 1 then callee.info.name = nil end
        elseif not (skipLeadingC and #frames == 0 and info.what == "C") then
            frames[#frames + 1] = { offset = offset, info = info }
        end
        offset = offset + 1
    end
    local read, depth = offset - 1, offset - 1
    if #frames >= FRAMES_READ and infoAt(base, offset, "l") then
        -- Deeper: the last level, by doubling then halving (O(depth log depth) in all).
        local lo, hi = offset, offset * 2
        while infoAt(base, hi, "l") do lo, hi = hi, hi * 2 end
        while hi - lo > 1 do
            local mid = (lo + hi) // 2
            if infoAt(base, mid, "l") then lo = mid else hi = mid end
        end
        depth = lo
    end
    -- The C frames below the script's first chunk are the host's (bklua's pmain): not shown.
    local trim = 0
    while depth - trim > read and infoAt(base, depth - trim, "S").what == "C" do trim = trim + 1 end
    if depth - trim == read then
        while #frames > 0 and frames[#frames].info.what == "C" do frames[#frames] = nil end
    end
    unreadFrom, frameCount = read, #frames + (depth - trim - read)
end

-- A frame's debug info and locals, on the running thread or on `failedThread` (no tail calls here: a
-- level counted on the running thread must not lose this function's frame).
local function frameInfo(frame, what)
    local info
    if failedThread then
        info = getinfo(failedThread, frames[frame].offset - 1, what)
    else
        local level = levelOf(frames[frame].offset)
        info = level and getinfo(level, what)
    end
    return info
end

-- A frame of `failedThread` is gone once an evaluation closed that coroutine (no locals then).
local function frameGone(frame)
    return failedThread ~= nil and getinfo(failedThread, frames[frame].offset - 1, "l") == nil
end

local function frameLocal(frame, i)
    local name, value
    if frameGone(frame) then return nil end
    if failedThread then
        name, value = getlocal(failedThread, frames[frame].offset - 1, i)
    else
        name, value = getlocal(levelOf(frames[frame].offset), i)
    end
    return name, value
end

local function frameSetLocal(frame, i, value)
    local name
    if frameGone(frame) then return nil end
    if failedThread then
        name = setlocal(failedThread, frames[frame].offset - 1, i, value)
    else
        name = setlocal(levelOf(frames[frame].offset), i, value)
    end
    return name
end

local function newRef(entry)
    if refCount >= ID_RANGE - 1 then
        error(format("this stop has given out %d variables references, all it can: "
            .. "step or continue to reset them", refCount), 0)
    end
    refCount = refCount + 1
    refs[ID_BASE + refCount] = entry
    return ID_BASE + refCount
end

local function expandable(v)
    local t = type(v)
    return t == "table" or t == "function" or (t == "userdata" and getmetatable(v) ~= nil)
end

local changes = 0  -- evaluations and setVariables so far this stop: a kept order may be stale

-- The length of t's list as a client pages it (1 up to the first nil), and the count of its other
-- keys: counted once a stop per table (20 locals aliasing a 5e6-element list counted it 20 times, and
-- again for each page), and again after an evaluation or a setVariable may have changed it.
local lengths, nameds, countsOf, countsAt = nil, nil, nil, nil
local function freshCounts()
    if countsOf ~= refs or countsAt ~= changes then
        lengths, nameds = setmetatable({}, { __mode = "k" }), setmetatable({}, { __mode = "k" })
        countsOf, countsAt = refs, changes
    end
end

local function listLength(t)
    freshCounts()
    local n = lengths[t]
    if n then return n end
    n = 0
    while rawget(t, n + 1) ~= nil do
        n = n + 1
        if n > 1e7 then break end
    end
    lengths[t] = n
    return n
end

local function namedCount(t, n)
    freshCounts()
    local named = nameds[t]
    if named then return named end
    named = c.countNamed(t, n > PAGE and n or 0)
    nameds[t] = named
    return named
end

local function variable(name, v, evaluateName)
    local ref = 0
    local item = { name = name, value = describe(v), type = type(v) }
    if type(v) == "table" or type(v) == "userdata" or type(v) == "function" then
        local entry = { kind = "value", value = v }
        if expandable(v) then ref = newRef(entry) end
        if type(v) == "table" then
            v = contentsOf(v)
            local n = listLength(v)
            -- Its named children's count (all of them: a client pages them by filter "named",
            -- start, count), and its list's when that is paged too.
            local named = namedCount(v, n)
            entry.count = named  -- the size of the lists namedKeys collects
            if n > PAGE then
                item.indexedVariables = n
                item.namedVariables = named
            elseif named > PAGE then
                item.namedVariables = named
            end
        end
    end
    item.variablesReference = ref
    if evaluateName then item.evaluateName = evaluateName end
    return item
end

-- MARK: Evaluation in a frame

-- The names a frame sees: its locals (innermost last wins), its varargs, its upvalues. Its level is
-- found once (a condition runs at every hit: a levelOf per local was most of its cost).
local function frameSlots(frame)
    local thread = failedThread
    local level
    if thread then level = frames[frame].offset - 1 else level = levelOf(frames[frame].offset) end
    if level == nil then return nil end
    local info
    if thread then info = getinfo(thread, level, "uf") else info = getinfo(level, "uf") end
    if info == nil then return nil end
    local slots = {}
    for i = 1, info.nups do
        local name, value = getupvalue(info.func, i)
        if name and name ~= "" then slots[name] = { kind = "upvalue", index = i, value = value, func = info.func } end
    end
    local i = 1
    while true do
        local name, value
        if thread then name, value = getlocal(thread, level, i) else name, value = getlocal(level, i) end
        if not name then break end
        if sub(name, 1, 1) ~= "(" then slots[name] = { kind = "local", index = i, value = value } end
        i = i + 1
    end
    local varargs = {}
    i = 1
    while info.isvararg do
        local name, value
        if thread then name, value = getlocal(thread, level, -i) else name, value = getlocal(level, -i) end
        if not name then break end
        varargs[i] = value
        i = i + 1
    end
    return slots, varargs, i - 1, info.func
end

local function environmentOf(slots, func)
    local envSlot = slots._ENV
    if envSlot then return envSlot.value end
    local i = 1
    while func do
        local name, value = getupvalue(func, i)
        if not name then break end
        if name == "_ENV" then return value end
        i = i + 1
    end
    return debug.getregistry()[2]  -- LUA_RIDX_GLOBALS
end

-- Compiled evaluations by their text (a condition runs at every hit of its breakpoint): the
-- function, or false and the compiler's message. Each run gives the function its own _ENV.
local compiledCache, compiledCount = {}, 0
local function compiled(code, statementsAllowed)
    local key = (statementsAllowed and "s" or "e") .. code
    local entry = compiledCache[key]
    if entry == nil then
        local chunk, message = load("return " .. code, "=(evaluate)", "t", {})
        if not chunk and statementsAllowed then chunk, message = load(code, "=(evaluate)", "t", {}) end
        entry = chunk and { chunk } or { false, message }
        if compiledCount >= 256 then compiledCache, compiledCount = {}, 0 end
        compiledCache[key], compiledCount = entry, compiledCount + 1
    end
    return entry[1], entry[2]
end

-- Runs `code` (an expression, or statements when it is not one) in frame `frame`; returns ok and
-- the results packed, or false and the error text. Locals and upvalues it assigns are written back.
local function evaluateIn(frame, code, statementsAllowed)
    local slots, varargs, nvarargs, func = frameSlots(frame)
    if slots == nil then return false, "the frame is gone" end
    local globals = environmentOf(slots, func)
    local dirty = {}
    local env = setmetatable({}, {
        __index = function(_, k)
            local slot = slots[k]
            if slot then return slot.value end
            return globals[k]
        end,
        __newindex = function(_, k, v)
            local slot = slots[k]
            if slot then
                slot.value = v
                dirty[#dirty + 1] = slot
            else
                globals[k] = v
            end
        end,
    })
    local chunk, message = compiled(code, statementsAllowed)
    if not chunk then return false, message end
    -- Its _ENV (this frame's names) in a fresh upvalue: functions an earlier run made keep theirs.
    upvaluejoin(chunk, 1, function() return env end, 1)
    local co = cocreate(chunk)
    c.evaluating(EVALUATION_SECONDS)
    local results = { coresume(co, unpack(varargs, 1, nvarargs)) }
    local ranOut = c.evaluating(0)
    if costatus(co) == "suspended" then
        pcall(coclose, co)
        return false, "evaluation yielded (an evaluation cannot wait)"
    end
    -- Ran out: failed, even when code of its own caught the limit's error and returned.
    if ranOut then return false, c.evaluationStopped end
    if not results[1] then return false, errorText(results[2]) end
    for _, slot in next, dirty do
        if slot.kind == "local" then frameSetLocal(frame, slot.index, slot.value)
        else setupvalue(slot.func, slot.index, slot.value) end
    end
    return true, results
end

-- MARK: Requests while stopped

local handlers = {}
local resumeModes = { ["continue"] = 0, stepIn = 1, next = 2, stepOut = 3 }

function handlers.stackTrace(args)
    local list = array({})
    local start = tonumber(args.startFrame) or 0
    if start < 0 then start = 0 end  -- as DAP's default
    local count = tonumber(args.levels) or 0
    -- At most FRAMES_READ frames an answer (levels 0 asks for all: a deep stack is paged).
    if count <= 0 or count > FRAMES_READ then count = FRAMES_READ end
    local lineBase, columnBase = host.positionBases()  -- the client's first line and column: 0 or 1
    for i = start + 1, math.min(frameCount, start + count) do
        local frame = frames[i]
        if not frame then break end
        local info = frame.info
        -- DAP: a frame without a source (a C function's) has column 0.
        local item = { id = ID_BASE + i, line = info.currentline > 0 and info.currentline - 1 + lineBase or 0,
                       column = info.what == "C" and 0 or columnBase }
        item.name = info.name or (info.what == "main" and "main chunk") or (info.what == "C" and "[C]")
            or ("function <" .. gsub(info.short_src, "^.*/", "") .. ":" .. info.linedefined .. ">")
        if info.what == "C" then
            item.presentationHint = "subtle"
        else
            local path = c.path(info.source)
            if path then
                item.source = { path = path, name = match(path, "[^/]*$") }
            else
                item.source = { name = info.short_src }
            end
        end
        list[#list + 1] = item
    end
    return { stackFrames = list, totalFrames = frameCount }
end

local function frameOf(id)
    id = tonumber(id)
    return id and id - ID_BASE
end

function handlers.scopes(args)
    local frame = frameOf(args.frameId)
    if not frame or not frames[frame] then error("no frame " .. tostring(args.frameId), 0) end
    local scopes = array({
        { name = "Locals", presentationHint = "locals", expensive = false,
          variablesReference = newRef({ kind = "locals", frame = frame }) },
    })
    local info = frames[frame].info
    if info.what ~= "C" then
        scopes[#scopes + 1] = { name = "Upvalues", expensive = false,
            variablesReference = newRef({ kind = "upvalues", frame = frame }) }
        scopes[#scopes + 1] = { name = "Varargs", expensive = false,
            variablesReference = newRef({ kind = "varargs", frame = frame }) }
    end
    scopes[#scopes + 1] = { name = "Globals", expensive = true,
        variablesReference = newRef({ kind = "globals", frame = frame }) }
    return { scopes = scopes }
end

-- A key as a child's name, one per key (setVariable finds the key by it): an identifier as it is,
-- another string clipped and quoted, its quotes, backslashes and control bytes escaped (the string
-- "[1]" was shown as the integer 1 was, "a\n" as "a" and a newline were), anything else in brackets.
local function keyName(k)
    if type(k) == "string" then
        if #k <= 400 and match(k, "^[%a_][%w_]*$") then return k end
        local quoted = gsub(clip(k, 400), '[%c"\\]', function(ch) return escapes[ch] or format("\\%d", byte(ch)) end)
        return '["' .. quoted .. '"]'
    end
    return "[" .. describe(k) .. "]"
end

-- `name`, or, when another key of the table already goes by it (clipped keys alike), `name (2)`...
local function uniqueName(keys, name, k)
    local taken = keys[name]
    if taken == nil or rawequal(taken, k) then return name end
    local i = 2
    while true do
        local numbered = name .. " (" .. i .. ")"
        taken = keys[numbered]
        if taken == nil or rawequal(taken, k) then return numbered end
        i = i + 1
    end
end

-- A table's named children: its keys but the list positions a client pages by index (1..n when
-- n > PAGE), in a stable order: numbers, then strings, then the others by their description.
-- Sorted once a stop per variables reference (a client pages them; a page of a 1e6-key table
-- then costs its own items, not a sort), again after an evaluation may have changed the table.

local function namedKeys(t, n, entry)
    if entry.named and entry.namedAt == changes then return entry.named end
    local keys, others = c.namedKeys(t, n > PAGE and n or 0, entry.count)  -- numbers and strings sorted, in C
    local texts = {}
    for i = 1, #others do texts[others[i]] = describe(others[i]) end
    sort(others, function(a, b) return texts[a] < texts[b] end)
    local at = #keys
    for i = 1, #others do keys[at + i] = others[i] end
    entry.named, entry.namedAt = keys, changes
    return keys
end

-- The children `variables` lists (paged as args asks: filter "indexed" or "named", start, count).
local function tableChildren(t, args, entry, mt)
    local list = array({})
    entry.keys = entry.keys or {}
    local start = math.tointeger(tonumber(args.start)) or 0
    if start < 0 then start = 0 end
    if args.filter == "indexed" then
        local count = tonumber(args.count) or PAGE
        for i = start + 1, start + count do
            local v = rawget(t, i)
            if v == nil then break end
            local name = "[" .. i .. "]"
            entry.keys[name] = i
            list[#list + 1] = variable(name, v)
        end
        return list
    end
    local n = listLength(t)
    local keys = namedKeys(t, n, entry)
    local count = math.tointeger(tonumber(args.count)) or 0
    local last = count > 0 and math.min(#keys + 1, start + count) or #keys + 1  -- + 1: the metatable
    for i = start + 1, math.min(last, #keys) do
        local k = keys[i]
        local name = uniqueName(entry.keys, keyName(k), k)
        entry.keys[name] = k
        list[#list + 1] = variable(name, rawget(t, k))
    end
    if last > #keys then
        if mt == nil then mt = getmetatable(t) end
        if mt ~= nil then list[#list + 1] = variable("[metatable]", mt) end
    end
    return list
end

-- A bridged Swift object's exported properties (named by its metatable's __bkproperties), each read
-- through the metatable's __index in a coroutine of its own under a time limit: that runs the
-- bridge's getter, or a crafted metatable's code, which may raise, yield or never end.
local PROPERTY_SECONDS = 1
local function propertiesOf(v, mt, list)
    local names = type(mt) == "table" and rawget(mt, "__bkproperties")
    local index = type(mt) == "table" and rawget(mt, "__index")
    if type(names) ~= "table" or type(index) ~= "function" then return end
    local stopped = false
    for i = 1, 1000 do
        local name = rawget(names, i)
        if type(name) ~= "string" then break end
        local ok, value = false, "not read (a property before it ran too long)"
        if not stopped then
            local co = cocreate(index)
            c.evaluating(PROPERTY_SECONDS)
            ok, value = coresume(co, v, name)
            stopped = c.evaluating(0)
            if costatus(co) == "suspended" then
                pcall(coclose, co)
                ok, value = false, "it yielded"
            end
            if stopped then ok, value = false, c.evaluationStopped
            elseif not ok then value = errorText(value) end
        end
        if ok then
            list[#list + 1] = variable(name, value)
        else
            list[#list + 1] = { name = name, value = "(error: " .. clip(value, 300) .. ")", type = "error",
                                variablesReference = 0 }
        end
    end
end

-- The names a frame's locals are listed by, by index: a local an inner one of the same name shadows
-- is `x (shadowed)` (`x (shadowed 2)`, ...), so that setVariable finds the one shown (both were `x`,
-- and setting the outer one set the inner). Lua's own slots ("(temporary)") have none.
local function localNames(frame)
    local names, seen, count = {}, {}, {}
    local i = 1
    while true do
        local name = frameLocal(frame, i)
        if not name then break end
        names[i] = name
        count[name] = (count[name] or 0) + 1
        i = i + 1
    end
    for k = 1, #names do
        local name = names[k]
        if sub(name, 1, 1) == "(" then
            names[k] = false
        else
            seen[name] = (seen[name] or 0) + 1
            local later = count[name] - seen[name]  -- inner locals of the same name
            if later > 0 then
                names[k] = name .. (later == 1 and " (shadowed)" or " (shadowed " .. later .. ")")
            end
        end
    end
    return names
end

function handlers.variables(args)
    local entry = refs[tonumber(args.variablesReference) or -1]
    if not entry then error("no such variables reference", 0) end
    local list = array({})
    if entry.kind == "locals" or entry.kind == "varargs" then
        local shown = entry.kind == "locals" and localNames(entry.frame)
        local i = 1
        while true do
            local name, value = frameLocal(entry.frame, entry.kind == "locals" and i or -i)
            if not name then break end
            if entry.kind == "varargs" then
                list[#list + 1] = variable("..." .. i, value, "..." .. i)
            elseif shown[i] then  -- a shadowed one has no expression that reaches it
                list[#list + 1] = variable(shown[i], value, shown[i] == name and name or nil)
            end
            i = i + 1
        end
    elseif entry.kind == "upvalues" then
        local info = frameInfo(entry.frame, "uf")
        for i = 1, info.nups do
            local name, value = getupvalue(info.func, i)
            list[#list + 1] = variable(name ~= "" and name or ("upvalue " .. i), value, name)
        end
    elseif entry.kind == "globals" then
        local slots, _, _, func = frameSlots(entry.frame)
        local globals = environmentOf(slots or {}, func)
        if type(globals) == "table" then return { variables = tableChildren(globals, args, entry) } end
    else
        local v = entry.value
        if type(v) == "table" then
            return { variables = tableChildren(contentsOf(v), args, entry, getmetatable(v)) }
        else
            local mt = getmetatable(v)
            if type(v) == "userdata" then propertiesOf(v, mt, list) end
            if type(v) == "function" then
                local info = getinfo(v, "Su")
                list[#list + 1] = variable("source", info.short_src .. ":" .. info.linedefined)
                for i = 1, info.nups do
                    local name, value = getupvalue(v, i)
                    list[#list + 1] = variable("[upvalue] " .. (name ~= "" and name or i), value)
                end
            end
            if mt ~= nil then list[#list + 1] = variable("[metatable]", mt) end
        end
    end
    local start = tonumber(args.start) or 0
    local count = tonumber(args.count) or 0
    if args.filter ~= "indexed" and (start > 0 or count > 0) then
        local page = array({})
        local last = count > 0 and math.min(#list, start + count) or #list
        for i = start + 1, last do page[#page + 1] = list[i] end
        list = page
    end
    return { variables = list }
end

function handlers.evaluate(args)
    local frame = frameOf(args.frameId) or 1
    if not frames[frame] then error("no frame " .. tostring(args.frameId), 0) end
    local code = args.expression
    if type(code) ~= "string" then error("no expression", 0) end
    changes = changes + 1  -- it may change a table whose keys a client pages
    local ok, results = evaluateIn(frame, code, args.context == "repl")
    if not ok then error(results, 0) end
    local n = results.n or #results
    if n <= 1 then return { result = "", variablesReference = 0 } end
    if n == 2 then
        local item = variable("", results[2])
        return { result = item.value, type = item.type, variablesReference = item.variablesReference,
                 indexedVariables = item.indexedVariables, namedVariables = item.namedVariables }
    end
    local texts = {}
    for i = 2, n do texts[#texts + 1] = describe(results[i]) end
    return { result = concat(texts, ", "), variablesReference = 0 }
end

local exception  -- the stop's error: { text, description, breakMode } (exceptionInfo)

function handlers.exceptionInfo()
    if not exception then error("not stopped at an error", 0) end
    return { exceptionId = "error", description = exception.text, breakMode = exception.breakMode,
             details = { message = exception.text, typeName = exception.typeName } }
end

function handlers.loadedSources()
    local list, seen = array({}), {}
    local function add(path)
        if path and not seen[path] then
            seen[path] = true
            list[#list + 1] = { path = path, name = match(path, "[^/]*$") }
        end
    end
    for _, frame in next, frames do
        if sub(frame.info.source, 1, 1) == "@" then add(c.path(frame.info.source)) end
    end
    for _, path in next, c.sources() do add(path) end
    return { sources = list }
end

function handlers.setVariable(args)
    local entry = refs[tonumber(args.variablesReference) or -1]
    if not entry then error("no such variables reference", 0) end
    local name, code = args.name, args.value
    if type(name) ~= "string" or type(code) ~= "string" then error("name and value expected", 0) end
    -- Lua's own slots ("(for state)", "(temporary)") are not listed and not to be set.
    if (entry.kind == "locals" or entry.kind == "upvalues") and sub(name, 1, 1) == "(" then
        error("no variable " .. name, 0)
    end
    changes = changes + 1
    local ok, results = evaluateIn(entry.frame or 1, code, false)
    if not ok then error(results, 0) end
    local value = results[2]
    if entry.kind == "locals" or entry.kind == "varargs" then
        local shown = entry.kind == "locals" and localNames(entry.frame)
        local i = 1
        local found
        while true do
            local n = frameLocal(entry.frame, entry.kind == "locals" and i or -i)
            if not n then break end
            if (entry.kind == "locals" and shown[i] == name) or (entry.kind == "varargs" and name == "..." .. i) then
                found = i
            end
            i = i + 1
        end
        if not found then error("no local " .. name, 0) end
        frameSetLocal(entry.frame, entry.kind == "locals" and found or -found, value)
    elseif entry.kind == "upvalues" then
        local func = frameInfo(entry.frame, "f").func
        local i, done = 1, false
        while true do
            local n = getupvalue(func, i)
            if not n then break end
            if n == name then setupvalue(func, i, value); done = true end
            i = i + 1
        end
        if not done then error("no upvalue " .. name, 0) end
    else
        local t = entry.value
        local key = entry.keys and entry.keys[name]
        if entry.kind == "globals" then
            local slots, _, _, func = frameSlots(entry.frame)
            t = environmentOf(slots or {}, func)
            key = key or name
        end
        if type(t) ~= "table" or key == nil then error("cannot set " .. name, 0) end
        if not rawequal(contentsOf(t), t) then
            error("cannot set " .. name .. " here: the table is frozen or observed (use the debug console)", 0)
        end
        rawset(t, key, value)
    end
    local item = variable(name, value)
    return { value = item.value, type = item.type, variablesReference = item.variablesReference }
end

-- MARK: Conditions, hit counts, log messages

local hits = {}  -- breakpoint id -> times its condition held

local function hitConditionHolds(condition, count)
    local op, number = match(condition, "^%s*([<>=%%]*)%s*(%d+)%s*$")
    number = tonumber(number)
    if not number then return true end
    if op == "" or op == "==" or op == "=" then return count == number  -- a plain N: the Nth hit
    elseif op == ">=" then return count >= number
    elseif op == ">" then return count > number
    elseif op == "<" then return count < number
    elseif op == "<=" then return count <= number
    elseif op == "%" then return number > 0 and count % number == 0
    end
    return true
end

local function interpolate(message)
    -- {expression}, its braces balanced: `{#({1, 2})}` is one.
    return (gsub(message, "%b{}", function(braced)
        local code = sub(braced, 2, -2)
        local ok, results = evaluateIn(1, code, false)
        if not ok then return "{" .. results .. "}" end
        if (results.n or #results) < 2 then return "nil" end
        local v = results[2]
        if type(v) == "string" then return v end
        return describe(v)
    end))
end

-- Whether the breakpoint `id` stops now (its condition, hit count and log message decide).
local function decide(id, condition, hitCondition, logMessage)
    if condition and condition ~= "" then
        local ok, results = evaluateIn(1, condition, false)
        if not ok then
            host.output("breakpoint condition failed: " .. results .. "\n", "console")
            return true  -- as most debuggers do: a broken condition stops, so the user sees it
        end
        if not results[2] then return false end
    end
    hits[id] = (hits[id] or 0) + 1
    if hitCondition and hitCondition ~= "" and not hitConditionHolds(hitCondition, hits[id]) then return false end
    if logMessage and logMessage ~= "" then
        host.output(interpolate(logMessage) .. "\n", "console")
        return false
    end
    return true
end

-- MARK: The stop

local function serve()
    while true do
        local seq, command, args = host.next()
        if seq == nil then  -- the client left (or the session ends): go on running
            c.step(0)
            return
        end
        local mode = resumeModes[command]
        if mode then
            c.step(mode)
            local all = host.stopsAll() and "true" or "false"
            host.respond(seq, command, true, command == "continue" and '{"allThreadsContinued":' .. all .. '}' or "{}")
            return
        end
        local handler = handlers[command]
        if handler then
            local ok, body = pcall(handler, type(args) == "table" and args or {})
            if ok then
                host.respond(seq, command, true, json(body))
            else
                host.respond(seq, command, false, errorText(body))
            end
        else
            host.respond(seq, command, false, "'" .. tostring(command) .. "' is not supported while stopped")
        end
    end
end

-- DAP threads: the main thread is 1; the session hands out the others (host.threadStarted), so a
-- worker state's agent numbers its threads in the same space. Each bk task is a thread from the
-- moment it is made until it ends (the tasks engine tells onTask), named by its function ("task
-- file.lua:LINE"); a coroutine of the script's own gets an id the first time it stops.
local mainThread = { id = 1, name = "main" }  -- this state's main code (a worker state's: its own id)
local taskThreads = setmetatable({}, { __mode = "k" })  -- coroutine -> { id, name }
local threadIds = setmetatable({}, { __mode = "k" })    -- a plain coroutine that stopped -> id
local coroutineThreads = {}  -- its id -> a weak box { co }, until it is seen dead or collected
local weakValue = { __mode = "v" }

-- Plain coroutines that stopped once and have ended since: their `thread` exited events (looked
-- for at each stop and as tasks come and go).
local function endCoroutineThreads()
    for id, box in next, coroutineThreads do
        local co = box[1]
        if co == nil or costatus(co) == "dead" then
            coroutineThreads[id] = nil
            host.threadExited(id)
        end
    end
end

local function functionName(prefix, f)
    local info = type(f) == "function" and getinfo(f, "S")
    if not info or info.what == "C" then return prefix .. " [C]" end
    return prefix .. " " .. gsub(info.short_src, "^.*/", "") .. ":" .. info.linedefined
end

local function currentThread(co)
    if host.workerThread then return host.workerThread, host.workerName end  -- every stop there
    local main
    if co == nil then co, main = corunning() end
    if main then return mainThread.id, mainThread.name end
    local task = taskThreads[co]
    if task then return task.id, task.name end
    local bottom = frames[frameCount] and frames[frameCount].info
    local name = "coroutine"
    if bottom and bottom.what ~= "C" then
        name = "coroutine " .. gsub(bottom.short_src, "^.*/", "") .. ":" .. bottom.linedefined
    end
    local id = threadIds[co]
    if not id then
        id = host.threadStarted(name, false)
        threadIds[co] = id
        coroutineThreads[id] = setmetatable({ co }, weakValue)
    end
    return id, name
end

local function entry(reason, detail, line, co, err)
    refs, refCount, exception = {}, 0, nil
    local postMortem = reason == "exception-task" or reason == "exception-coroutine"
    failedThread = postMortem and co or nil
    local hitId
    if reason == "breakpoint" then
        -- Decided before the stack is read: a condition that does not hold costs the condition alone
        -- (its frame is the one just below `stop`, where the line event came from).
        local condition, hitCondition, logMessage
        hitId, condition, hitCondition, logMessage = host.breakpoint(detail, line)
        if hitId == nil then return end
        frames, frameCount = { { offset = 1 } }, 1
        if not decide(hitId, condition, hitCondition, logMessage) then return end
    end
    endCoroutineThreads()
    collectFrames(postMortem or reason == "exception" or reason == "exception-caught")
    if frameCount == 0 then return end
    local threadId, threadName = currentThread(failedThread)
    -- A worker's stop stops that worker only; the main state's, every thread but the workers.
    local body = { reason = reason, threadId = threadId, allThreadsStopped = host.stopsAll() }
    if reason == "breakpoint" then
        body.hitBreakpointIds = array({ hitId })
    elseif reason == "function" then
        local id, condition, hitCondition = host.functionBreakpoint(detail)
        -- The hook matched the called function by identity with the one the name reaches.
        if id == nil then return end
        if not decide(id, condition, hitCondition, nil) then return end
        body.reason = "function breakpoint"
        body.hitBreakpointIds = array({ id })
    elseif reason == "exception" or reason == "exception-caught" then
        local level = levelOf(frames[1].offset)
        local _, value = getlocal(level - frames[1].offset + 1, 1)  -- the message handler's argument
        body.reason = "exception"
        body.description = reason == "exception" and "uncaught error" or "error (a pcall or a helper catches it)"
        body.text = errorText(value)
        exception = { text = body.text, breakMode = reason == "exception" and "unhandled" or "always",
                      typeName = type(value) }
    elseif reason == "exception-task" or reason == "exception-coroutine" then
        body.reason = "exception"
        body.description = reason == "exception-task" and "error in a task (nothing in the task catches it)"
            or "error in a coroutine (its coroutine.resume or wrap catches it)"
        body.text = errorText(err)
        exception = { text = body.text, breakMode = reason == "exception-task" and "unhandled" or "always",
                      typeName = type(err) }
    end
    c.hold(true)  -- a stop's time is not the script's (released below, or by the C side on an error)
    host.stopped(json(body), threadId, threadName)
    serve()
    c.hold(false)
    refs, frames, failedThread, exception = nil, nil, nil, nil
end

stop = function(reason, detail, line, co, err)
    local ok, message = pcall(entry, reason, detail, line, co, err)
    if not ok then host.output("bklua debugger: " .. errorText(message) .. "\n", "console") end
    failedThread = nil
    host.resumed()
end

-- MARK: Tasks as threads

-- The tasks engine's observer (TaskEngine.lua): called as a task is made, fails and ends. Answers
-- false once this agent is detached, and the engine lets go of it. Never raises into the engine.
local registry = debug.getregistry()
local observerKey = c.taskObserverKey

local function taskEvent(event, co, x)
    if next(coroutineThreads) ~= nil then endCoroutineThreads() end
    if event == "start" then
        local name = functionName("task", x)
        taskThreads[co] = { id = host.threadStarted(name, true), name = name }
    elseif event == "end" then
        local task = taskThreads[co]
        if task then
            taskThreads[co] = nil
            host.threadExited(task.id)
        end
    elseif event == "error" then
        c.taskFailed(co, x)
    end
end

local function onTask(event, co, x)
    if not rawequal(rawget(registry, observerKey), onTask) then return false end
    pcall(taskEvent, event, co, x)
end

-- Tasks made before this agent: threads from now on, named by their coroutine's bottom function.
local function adoptLiveTasks(engine)
    local threads = rawget(engine, "taskThreads")
    if type(threads) ~= "table" then return end
    for co in next, threads do
        if type(co) == "thread" and costatus(co) ~= "dead" and not taskThreads[co] then
            local level, bottom = 0, nil
            while true do
                local info = getinfo(co, level, "f")
                if not info then break end
                bottom = info.func
                level = level + 1
            end
            local name = functionName("task", bottom)
            taskThreads[co] = { id = host.threadStarted(name, true), name = name }
        end
    end
end

rawset(registry, observerKey, onTask)  -- an engine that loads later takes it (TaskPrimitives.swift)
do
    local engine = rawget(registry, "bk.tasks")
    if type(engine) == "table" and type(rawget(engine, "observe")) == "function" then
        pcall(adoptLiveTasks, engine)
        rawget(engine, "observe")(onTask)
    end
end

return stop
