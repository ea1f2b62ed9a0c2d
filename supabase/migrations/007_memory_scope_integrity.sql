-- Integrity of memory supersession. Idempotent: the local stack applies every
-- migration at each boot, so 004's definitions are replaced here again each time.

-- A superseded fact stays superseded when its successor is deleted. 002 declared superseded_by
-- as a foreign key "on delete set null", which made deleting "my cat is called Felix" bring back
-- "Tom". It is now a plain pointer: after its successor is deleted it names a fact that no longer
-- exists, which still says "replaced". Saying the old fact again revives it (insert_memory).
alter table agent_memories drop constraint if exists agent_memories_superseded_by_fkey;

-- Supersession never crosses scopes: an old memory is replaced only by a memory of the same user
-- and the same project (or both without one). A correction inside a project leaves the user's
-- unprojected fact current everywhere else, whatever ids a caller passes.
create or replace function supersede_memories(
  p_user_id text,
  p_old_ids uuid[],
  p_new_id  uuid
) returns int
language sql
set search_path = public
as $$
  with successor as (
    select n.project_id from agent_memories n where n.id = p_new_id and n.user_id = p_user_id
  ),
  changed as (
    update agent_memories m
       set superseded_by = p_new_id, updated_at = now()
      from successor s
     where m.id = any(p_old_ids)
       and m.id <> p_new_id
       and m.user_id = p_user_id
       and m.project_id is not distinct from s.project_id
       and m.superseded_by is null
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
