-- Phantom's editor operations, run inside Neovim by nvim_exec_lua. Each
-- call runs as one step of Neovim's event loop, so the human's keys never
-- land between its API calls. Only API calls are used (never feedkeys),
-- so a human in insert mode stays in insert mode. Nothing here writes a
-- buffer or discards a change: :bdelete is used only on unmodified buffers.
-- Errors are returned as {err = "..."} for the Go side to word. Options
-- go through vim.bo, which every Neovim from 0.7 on has (the
-- nvim_buf_get_option family is deprecated in newer ones).
local api, fn = vim.api, vim.fn
local M = {}

local function file(buf)
  return {
    tab_id = buf,
    path = api.nvim_buf_get_name(buf),
    modified = vim.bo[buf].modified,
    lines = api.nvim_buf_line_count(buf),
  }
end

local function pane(win)
  local pos = api.nvim_win_get_position(win)
  return {
    id = win,
    focused = win == api.nvim_get_current_win(),
    row = pos[1], col = pos[2],
    width = api.nvim_win_get_width(win),
    height = api.nvim_win_get_height(win),
    file = file(api.nvim_win_get_buf(win)),
    cursor = api.nvim_win_get_cursor(win)[1],
    top = fn.line('w0', win),
    bottom = fn.line('w$', win),
  }
end

-- A buffer the agent may name: loaded or not, but listed (an open file).
local function tab(buf)
  return api.nvim_buf_is_valid(buf) and fn.buflisted(buf) == 1
end

-- The window of the current tab page showing buf, or nil.
local function window_of(buf)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
end

-- Shows buf in win. Neovim's API hides the buffer win showed even when it
-- is modified and 'hidden' is off, so the human's changes stay in memory.
local function show(win, buf)
  fn.bufload(buf)
  vim.bo[buf].buflisted = true
  local prev = api.nvim_win_get_buf(win)
  if prev ~= buf then
    api.nvim_win_set_buf(win, buf)
    -- As :edit does, the empty buffer a fresh Neovim starts with goes
    -- once a file replaces it (only when nothing was typed into it).
    if api.nvim_buf_get_name(prev) == '' and vim.bo[prev].buftype == '' and not vim.bo[prev].modified
        and api.nvim_buf_line_count(prev) == 1 and api.nvim_buf_get_lines(prev, 0, 1, false)[1] == ''
        and #fn.win_findbuf(prev) == 0 then
      api.nvim_buf_delete(prev, {})
    end
  end
end

-- Puts win's cursor on line (clamped to the buffer) and centres it.
local function goto_line(win, line)
  local clamped, last = false, api.nvim_buf_line_count(api.nvim_win_get_buf(win))
  if line > last then
    line, clamped = last, true
  end
  api.nvim_win_set_cursor(win, { line, 0 })
  api.nvim_win_call(win, function() vim.cmd('normal! zz') end)
  return line, clamped
end

function M.state()
  local panes = {}
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    -- Floating windows (completion menus, plugin popups) are not panes.
    if api.nvim_win_get_config(win).relative == '' then
      table.insert(panes, pane(win))
    end
  end
  local tabs = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if tab(buf) then
      table.insert(tabs, file(buf))
    end
  end
  return { mode = api.nvim_get_mode().mode, panes = panes, tabs = tabs }
end

-- Opens path (or the tab buf, when path is empty) at line (0: leave the
-- cursor) in the focused window, or in a new split ('right', 'below'), or
-- in the window already showing it when reuse is set.
function M.open(path, buf, line, split, reuse)
  if path ~= '' then
    buf = fn.bufadd(path)
  elseif not tab(buf) then
    return { err = 'no_tab' }
  end
  local win = reuse and window_of(buf) or nil
  if not win then
    if split == 'right' then
      vim.cmd('belowright vsplit')
    elseif split == 'below' then
      vim.cmd('belowright split')
    end
    win = api.nvim_get_current_win()
  end
  show(win, buf)
  api.nvim_set_current_win(win)
  local clamped = false
  if line > 0 then
    line, clamped = goto_line(win, line)
  end
  return { pane = pane(win), line = line, clamped = clamped }
end

-- Moves the reveal mark (a sign in group 'phantom', and message as virtual
-- text) to buf's line; the previous one goes.
function M.mark(buf, line, message)
  fn.sign_define('PhantomReveal', { text = '▶', texthl = 'Search', numhl = 'Search' })
  fn.sign_unplace('phantom')
  fn.sign_place(0, 'phantom', 'PhantomReveal', buf, { lnum = line, priority = 50 })
  local ns = api.nvim_create_namespace('phantom')
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) then
      api.nvim_buf_clear_namespace(b, ns, 0, -1)
    end
  end
  if message ~= '' then
    api.nvim_buf_set_extmark(buf, ns, line - 1, 0, { virt_text = { { '◀ ' .. message, 'Search' } } })
  end
  return {}
end

-- open with reuse, then mark: reveal_line in one step of the event loop.
function M.reveal(path, buf, line, message)
  local r = M.open(path, buf, line, '', true)
  if not r.err then
    M.mark(r.pane.file.tab_id, r.line, message)
  end
  return r
end

-- Shows buf in the window already showing it, else the focused one.
function M.focus(buf)
  if not tab(buf) then
    return { err = 'no_tab' }
  end
  local win = window_of(buf) or api.nvim_get_current_win()
  show(win, buf)
  api.nvim_set_current_win(win)
  return { pane = pane(win) }
end

-- Closes the tab buf: every window showing it shows another open file (or
-- an empty buffer), then an unmodified buffer is deleted and a modified
-- one (only with force) unlisted and kept, hidden, with its changes.
function M.close(buf, force)
  if not tab(buf) then
    return { err = 'no_tab' }
  end
  local f = file(buf)
  if f.modified and not force then
    return { err = 'modified', file = f }
  end
  local other
  for _, b in ipairs(api.nvim_list_bufs()) do
    if b ~= buf and tab(b) then
      other = b
    end
  end
  other = other or api.nvim_create_buf(true, false)
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == buf then
      show(win, other)
    end
  end
  if f.modified then
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].buflisted = false
  else
    api.nvim_buf_delete(buf, {})
  end
  return { file = f, kept = f.modified }
end

return M
