-- Reconciliation of extracted facts: a changed fact supersedes the old memory, which is kept
-- (never hard-deleted) with superseded_by pointing at its replacement.
-- Idempotent: the local stack applies every migration at each boot.

create index if not exists agent_memories_superseded_by on agent_memories (superseded_by) where superseded_by is not null;

-- Marks the user's own current memories in p_old_ids as replaced by p_new_id. Other users'
-- and global memories are never touched, whatever ids are passed. Returns how many changed.
create or replace function supersede_memories(
  p_user_id text,
  p_old_ids uuid[],
  p_new_id  uuid
) returns int
language sql
set search_path = public
as $$
  with changed as (
    update agent_memories
       set superseded_by = p_new_id, updated_at = now()
     where id = any(p_old_ids)
       and id <> p_new_id
       and user_id = p_user_id
       and superseded_by is null
    returning 1
  )
  select count(*)::int from changed;
$$;

revoke all on function supersede_memories(text, uuid[], uuid) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function supersede_memories(text, uuid[], uuid) from anon, authenticated;
  end if;
end;
$$;
