-- Invocation: a target and a block, invoked later as block(target).

test("invoke returns f(target)", function()
  local target = { name = "t" }
  local inv = bk.invocationWithTarget(target, function(t) return t.name .. "!" end)
  eq(inv:invoke(), "t!")
  eq(inv:bk_invoke(), "t!")
  eq(inv.target, target)
end)

test("invoke passes extra arguments and returns every result", function()
  local inv = bk.invocationWithTarget(10, function(t, a, b) return t + a, t + b, nil, "last" end)
  local r = table.pack(inv:invoke(1, 2))
  eq(r.n, 4)
  eq(r[1], 11); eq(r[2], 12); eq(r[3], nil); eq(r[4], "last")
end)

test("the target can be set", function()
  local calls = {}
  local inv = bk.invocationWithTarget("a", function(t) calls[#calls + 1] = t end)
  inv:invoke()
  inv.target = "b"
  eq(inv.target, "b")
  inv:invoke()
  inv.target = nil
  inv:invoke()
  eq(#calls, 2)
  eq(calls[1], "a"); eq(calls[2], "b")
  eq(inv.target, nil)
end)

test("the block is readable but not settable; unknown fields are errors", function()
  local f = function() end
  local inv = bk.invocationWithTarget(1, f)
  eq(inv.block, f)
  raises("field 'block' of bk.Invocation is read-only", function() inv.block = print end)
  raises("cannot set field 'other' of bk.Invocation", function() inv.other = 1 end)
end)

test("invocations are bk.Invocation objects", function()
  local inv = bk.invocationWithTarget(1, print)
  eq(type(inv), "userdata")
  ok(tostring(inv):find("^bk.Invocation"))
end)

test("a raising block's error reaches the caller unchanged", function()
  local inv = bk.invocationWithTarget(1, function() error("inside invoke") end)
  local okCall, err = pcall(inv.invoke, inv)
  ok(not okCall)
  ok(err:match("^Tests/lua/test_invocation%.lua:%d+: inside invoke$"), err)
  inv.target = 2  -- still usable afterwards
  eq(inv.target, 2)
end)

test("bad arguments", function()
  raises("bad argument #2 to 'invocationWithTarget' (function expected, got no value)", bk.invocationWithTarget, {})
  raises("bad argument #2 to 'invocationWithTarget' (function expected, got number)", bk.invocationWithTarget, {}, 1)
  local inv = bk.invocationWithTarget(1, print)
  raises("bad argument #1 to 'invoke' (bk.Invocation expected, got table)", inv.invoke, {})
end)

test("an invocation does not keep a cycle alive", function()
  local gone = false
  do
    local target = setmetatable({}, { __gc = function() gone = true end })
    target.inv = bk.invocationWithTarget(target, function(t) return t end)
  end
  collectgarbage(); collectgarbage()
  ok(gone)
end)

-- Documentation: every name of the three families has one reference heading and one annotation.
test("reference.md and bk.lua document every collection, association and invocation name", function()
  local root = (arg and arg[0] or ""):match("^(.*)/Tests/lua/[^/]*$") or "."
  local function read(path)
    local f = assert(io.open(root .. "/" .. path))
    local text = f:read("a")
    f:close()
    return text
  end
  local reference, annotations = read("docs/reference.md"), read("library/bk.lua")
  local names = { "array", "dictionary", "set", "orderedSet", "indexSet", "kind", "each", "apply", "match",
    "select", "reject", "map", "reduce", "reduceInteger", "reduceFloat", "any", "none", "all", "corresponds",
    "performSelect", "performReject", "performMap", "associateValue", "atomicallyAssociateValue",
    "associateCopyOfValue", "atomicallyAssociateCopyOfValue", "weaklyAssociateValue", "associatedValueForKey",
    "removeAllAssociatedObjects", "invocationWithTarget" }
  for _, name in ipairs(names) do
    eq(type(bk[name]), "function", name)
    local _, headings = reference:gsub("\n### bk%." .. name .. "%(", "")
    eq(headings, 1, "heading for bk." .. name)
    local _, functions = annotations:gsub("\nfunction bk%." .. name .. "%(", "")
    eq(functions, 1, "annotation for bk." .. name)
  end
  ok(reference:find("\n### bk.null\n", 1, true), "bk.null heading")
  ok(annotations:find("\nbk.null = ", 1, true), "bk.null annotation")
end)

test("invoke with many arguments", function()
  local args = {}
  for i = 1, 5000 do args[i] = i end
  local inv = bk.invocationWithTarget(0, function(t, ...) return select("#", ...) end)
  eq(inv:invoke(table.unpack(args)), 5000)
end)
