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
