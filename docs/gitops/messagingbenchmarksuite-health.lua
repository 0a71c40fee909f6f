-- Argo CD health check of a msgbench.io/MessagingBenchmarkSuite (docs/gitops.md).
-- A suite with runs left is Progressing (with its progress, done/total runs); a suspended one is
-- Suspended. Succeeded (every run ended) is Healthy unless its ObjectivesMet condition is False:
-- a point missed an objective, which is Degraded. Failed (a run failed under failurePolicy Stop,
-- or the suite cannot run) is Degraded with the operator's message.
local hs = {}
local status = obj.status
if status == nil or status.phase == nil or status.phase == "" then
  hs.status = "Progressing"
  hs.message = "waiting for the msgbench operator"
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "waiting for the msgbench operator to observe generation " .. generation
  return hs
end
local phase = status.phase
local message = status.message
if message == nil then
  message = ""
end
local progress = ""
if status.progress ~= nil and status.progress ~= "" then
  progress = " (" .. status.progress .. " runs)"
end
if phase == "Pending" or phase == "Running" then
  hs.status = "Progressing"
  hs.message = phase .. progress
  if message ~= "" then
    hs.message = hs.message .. ": " .. message
  end
  return hs
end
if phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = "Suspended" .. progress
  if message ~= "" then
    hs.message = hs.message .. ": " .. message
  end
  return hs
end
if phase == "Succeeded" then
  local objectives = nil
  if status.conditions ~= nil then
    for _, c in ipairs(status.conditions) do
      if c.type == "ObjectivesMet" then
        objectives = c
      end
    end
  end
  if objectives ~= nil and objectives.status == "False" then
    hs.status = "Degraded"
    hs.message = "objectives missed: " .. (objectives.message or "")
    return hs
  end
  hs.status = "Healthy"
  hs.message = "Succeeded" .. progress
  if status.verdict ~= nil and status.verdict ~= "" then
    hs.message = hs.message .. ", verdict " .. status.verdict
  end
  return hs
end
if phase == "Failed" then
  hs.status = "Degraded"
  if message ~= "" then
    hs.message = message
  else
    hs.message = "Failed" .. progress
  end
  return hs
end
hs.status = "Unknown"
hs.message = "unknown phase " .. phase
return hs
