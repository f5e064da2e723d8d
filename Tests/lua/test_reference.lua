-- docs/reference.md and library/bk.lua document exactly the names the live `bk` table exports:
-- one `### bk.NAME` heading and one `function bk.NAME(...) end` (or `bk.NAME = ...` for a value)
-- per exported name, none missing, none extra. Runs under bklua and under stock lua5.4 (bk.so).

local bk = require "bk"

local function readFile(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("a")
  f:close()
  return text
end

local function exported()
  local names = {}
  for name in pairs(bk) do
    if type(name) == "string" then names[name] = true end
  end
  return names
end

-- Collects NAME from every line matching one of `patterns`; returns the set and any duplicates.
local function collect(text, patterns)
  local names, duplicates = {}, {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    for _, pattern in ipairs(patterns) do
      local name = line:match(pattern)
      if name then
        if names[name] then duplicates[#duplicates + 1] = name end
        names[name] = true
        break
      end
    end
  end
  return names, duplicates
end

local function sorted(set)
  local list = {}
  for name in pairs(set) do list[#list + 1] = name end
  table.sort(list)
  return list
end

-- Fails listing the names missing from `documented` and those documented but not exported.
local function sameNames(documented, duplicates, where)
  local live = exported()
  local missing, extra = {}, {}
  for name in pairs(live) do if not documented[name] then missing[#missing + 1] = name end end
  for name in pairs(documented) do if not live[name] then extra[#extra + 1] = name end end
  table.sort(missing)
  table.sort(extra)
  local problems = {}
  if #missing > 0 then problems[#problems + 1] = "not documented: " .. table.concat(missing, ", ") end
  if #extra > 0 then problems[#problems + 1] = "documented but not exported: " .. table.concat(extra, ", ") end
  if #duplicates > 0 then problems[#problems + 1] = "documented twice: " .. table.concat(duplicates, ", ") end
  if #problems > 0 then error(where .. ": " .. table.concat(problems, "; "), 2) end
end

test("docs/reference.md has one heading per exported name", function()
  local names, duplicates = collect(readFile("docs/reference.md"), {
    "^###%s+bk%.([%a_][%w_]*)%s*%(",   -- ### bk.map(c, f)
    "^###%s+bk%.([%a_][%w_]*)%s*$",    -- ### bk.null
    "^###%s+bk%.([%a_][%w_]*)%s",      -- ### bk.mainQueue (a value)
  })
  sameNames(names, duplicates, "docs/reference.md")
end)

test("library/bk.lua annotates every exported name", function()
  local text = readFile("library/bk.lua")
  ok(text:match("^%-%-%-@meta"), "library/bk.lua starts with ---@meta")
  local names, duplicates = collect(text, {
    "^function%s+bk%.([%a_][%w_]*)%s*%(",  -- function bk.map(c, f) end
    "^bk%.([%a_][%w_]*)%s*=",              -- bk.null = ...
  })
  sameNames(names, duplicates, "library/bk.lua")
end)

test("library/bk.lua is valid Lua returning the documented table", function()
  local chunk = assert(loadfile("library/bk.lua", "t", setmetatable({}, { __index = _G })))
  local documented = chunk()
  eq(type(documented), "table")
  for name in pairs(exported()) do
    if type(bk[name]) == "function" then
      eq(type(documented[name]), "function", "bk." .. name .. " is annotated as a function")
    end
  end
end)

test("library/bk.lua declares every bk type its annotations use", function()
  local text = readFile("library/bk.lua")
  local declared, undeclared = {}, {}
  for name in text:gmatch("%-%-%-@class%s+(bk%.[%w_%.]+)") do declared[name] = true end
  for name in text:gmatch("%-%-%-@alias%s+(bk%.[%w_%.]+)") do declared[name] = true end
  for line in text:gmatch("[^\n]+") do
    local annotation = line:match("^%-%-%-@(%a+)")
    if annotation and annotation ~= "class" and annotation ~= "alias" and annotation ~= "meta" then
      for name in line:gmatch("bk%.%u[%w_]*") do
        if not declared[name] then undeclared[#undeclared + 1] = name .. " (" .. line .. ")" end
      end
    end
  end
  ok(#undeclared == 0, "used but not declared with ---@class or ---@alias: " .. table.concat(undeclared, "; "))
end)

test("the check catches a missing, an extra and a duplicated name", function()
  local all = exported()
  local someName = next(all)
  local withoutOne = {}
  for name in pairs(all) do if name ~= someName then withoutOne[name] = true end end
  raises("not documented: " .. someName, sameNames, withoutOne, {}, "x")
  local withExtra = { noSuchFunction = true }
  for name in pairs(all) do withExtra[name] = true end
  raises("documented but not exported: noSuchFunction", sameNames, withExtra, {}, "x")
  raises("documented twice: " .. someName, sameNames, all, { someName }, "x")
  local names, duplicates = collect("### bk.a(x)\n### bk.b\n## bk.c\n### bk.a\n", { "^###%s+bk%.([%a_][%w_]*)" })
  eq(#sorted(names), 2)
  eq(duplicates[1], "a")
end)

test("README.md and docs/reference.md point at no file outside the repository", function()
  for _, path in ipairs { "README.md", "docs/reference.md" } do
    local text = readFile(path)
    for link in text:gmatch("`(%.%./[^`]*)`") do
      -- A path dependency in a Package.swift example is not a link.
      ok(link:find("^%.%./[Bb]locks%-?[Bb]ridge$"), path .. " points outside the repository: " .. link)
    end
    ok(not text:find("../shared", 1, true), path .. " mentions ../shared")
  end
end)

-- The kinds of objects (`### <Kind> objects (bk.Type)` entries, their bullets) and the live methods
-- of each kind are annotated in library/bk.lua; library/bklua.lua declares bklua's globals.

local reference = dofile("Tests/lua/reference_entries.lua")

-- The classes of an annotation file: name -> { parents = {...}, members = {name = true} }, from
-- `---@class bk.X<T>: bk.Y, ...`, its `---@field name`, and `function L:name(` / `L.name =` on the
-- `local L = {}` that follows the class.
local function annotatedClasses(text)
  local classes, byLocal, current = {}, {}, nil
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local name, rest = line:match("^%-%-%-@class%s+([%w_%.]+)(.*)$")
    if name then
      current = { parents = {}, members = {} }
      classes[name] = current
      rest = rest:gsub("^%b<>", "")
      for parent in (rest:match("^%s*:(.*)$") or ""):gmatch("[^,]+") do
        local parentName = parent:match("^%s*(bk%.[%w_%.]+)")
        if parentName then current.parents[#current.parents + 1] = parentName end
      end
    elseif current and line:match("^%-%-%-@field") then
      local field = line:match("^%-%-%-@field%s+([%a_][%w_]*)")
      if field then current.members[field] = true end
    elseif current and line:match("^local%s+[%a_][%w_]*%s*=%s*{}") then
      byLocal[line:match("^local%s+([%a_][%w_]*)")] = current
      current = nil
    elseif not line:match("^%-%-%-") then
      current = nil
      local owner, member = line:match("^function%s+([%a_][%w_]*)[:.]([%a_][%w_]*)%s*%(")
      if not owner then owner, member = line:match("^([%a_][%w_]*)%.([%a_][%w_]*)%s*=") end
      if owner and byLocal[owner] then byLocal[owner].members[member] = true end
    end
  end
  return classes
end

local function annotates(classes, class, member, seen)
  local c = classes[class]
  seen = seen or {}
  if not c or seen[class] then return false end
  seen[class] = true
  if c.members[member] then return true end
  for _, parent in ipairs(c.parents) do
    if annotates(classes, parent, member, seen) then return true end
  end
  return false
end

test("library/bk.lua declares every kind of object docs/reference.md documents, with each member", function()
  local classes = annotatedClasses(readFile("library/bk.lua"))
  local entries = reference.types()
  ok(#entries >= 10, "kinds of objects found in docs/reference.md: " .. #entries)
  for _, entry in ipairs(entries) do
    for _, type in ipairs(entry.types) do
      ok(classes["bk." .. type], "library/bk.lua has no ---@class bk." .. type .. " (" .. entry.heading .. ")")
    end
    for _, member in ipairs(entry.members) do
      local found = false
      for _, type in ipairs(entry.types) do found = found or annotates(classes, "bk." .. type, member.name) end
      ok(found, ("library/bk.lua annotates no %s.%s (%s): a ---@field or a function on the class's table")
        :format(entry.types[1], member.name, entry.heading))
    end
  end
end)

test("library/bk.lua annotates every method of every kind of object", function()
  local classes = annotatedClasses(readFile("library/bk.lua"))
  for _, entry in ipairs(reference.types()) do
    for _, type in ipairs(entry.types) do
      local source = assert(reference.samples[type], "no sample object for bk." .. type .. " in Tests/lua/reference_entries.lua")
      local object = assert(load("return " .. source, "=sample", "t", _ENV))()
      for _, name in ipairs((reference.liveMethods(object))) do
        -- The collection kinds share one method table (an array's `add` refuses it): a method is
        -- annotated for the kind or for another kind of its entry (`bk.set` for `add`).
        local found = false
        for _, sibling in ipairs(entry.types) do found = found or annotates(classes, "bk." .. sibling, name) end
        ok(found,
          ("library/bk.lua annotates no method %s of bk.%s (for a collection helper: `Collection.%s = bk.%s`)")
            :format(name, type, name, name))
      end
      if type == "BlockHandle" then object:cancel() end
      if type == "Worker" then object:result() end
    end
  end
end)

test("the annotation check reads classes, fields, methods and parents", function()
  local classes = annotatedClasses(table.concat({
    "---@class bk.base", "---@field size integer", "local Base = {}", "function Base:grow(n) end",
    "---@class bk.list<T>: bk.base, { [integer]: T }", "local List = {}", "List.map = bk.map",
    "function Other:nope() end",
  }, "\n"))
  ok(annotates(classes, "bk.list", "size") and annotates(classes, "bk.list", "grow") and annotates(classes, "bk.list", "map"))
  ok(not annotates(classes, "bk.list", "nope") and not annotates(classes, "bk.base", "map"))
  ok(not annotates(classes, "bk.missing", "size"))
end)

test("library/bklua.lua declares bk and the bk_NAME global of every function", function()
  local text = readFile("library/bklua.lua")
  ok(text:match("^%-%-%-@meta"), "library/bklua.lua starts with ---@meta")
  ok(text:find('\nbk = require("bk")\n', 1, true), "library/bklua.lua declares bk")
  local declared = {}
  for name, source in text:gmatch("\nbk_([%a_][%w_]*) = bk%.([%a_][%w_]*)") do
    eq(name, source, "bk_" .. name .. " is bk." .. name)
    declared[name] = true
  end
  local functions = {}
  for name, value in pairs(bk) do
    if type(value) == "function" then functions[name] = true end
  end
  for name in readFile("docs/reference.md"):gmatch("\n###%s+bk%.([%a_][%w_]*)%s*%(") do functions[name] = true end
  for name in pairs(functions) do ok(declared[name], "library/bklua.lua has no `bk_" .. name .. " = bk." .. name .. "`") end
  for name in pairs(declared) do ok(functions[name], "library/bklua.lua declares bk_" .. name .. ", which is no bk function") end
end)
