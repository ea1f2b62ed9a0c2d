-- A deleted memory's mark (021_forgotten_memories.sql) is data held about its user: derived from
-- the words they deleted (a hash and an embedding), kept up to 14 days. The export (GET
-- /api/me/export, GDPR article 15) therefore lists the user's marks beside their memories. The
-- function is 012's with `forgotten_memories` added; the rest is unchanged. Idempotent: the local
-- stack applies every migration at each boot.

create or replace function export_user_data(p_user_id text) returns jsonb
language sql
stable
set search_path = public
as $$
  select jsonb_build_object(
    'sessions', coalesce((
      select jsonb_agg(jsonb_build_object(
               'session_id', c.session_id,
               'project_id', s.project_id,
               'name', s.name,
               'created_at', c.created_at,
               'updated_at', c.updated_at,
               'messages', c.messages,
               'traces', coalesce((select jsonb_object_agg(t.message_id, t.steps) from execution_traces t
                                    where t.session_id = c.session_id and t.user_id = p_user_id), '{}'::jsonb))
             order by c.created_at, c.session_id)
        from agent_conversations c
        left join agent_sessions s on s.session_id = c.session_id and s.user_id = p_user_id
       where c.user_id = p_user_id), '[]'::jsonb),
    'memories', coalesce((
      select jsonb_agg(jsonb_build_object(
               'id', m.id,
               'project_id', m.project_id,
               'content', m.content,
               'category', m.category,
               'tags', m.tags,
               'metadata', m.metadata,
               'source_session_id', m.source_session_id,
               'created_at', m.created_at,
               'updated_at', m.updated_at,
               'superseded_by', m.superseded_by)
             order by m.created_at, m.id)
        from agent_memories m
       where m.user_id = p_user_id), '[]'::jsonb),
    'forgotten_memories', coalesce((
      select jsonb_agg(jsonb_build_object(
               'project_id', f.project_id,
               'content_hash', f.content_hash,
               'embedding', to_jsonb(f.embedding::real[]),
               'source_session_id', f.source_session_id,
               'stated_at', f.stated_at,
               'forgotten_at', f.forgotten_at)
             order by f.forgotten_at, f.content_hash)
        from forgotten_memories f
       where f.user_id = p_user_id), '[]'::jsonb),
    'user_context', (select jsonb_build_object('plan', u.plan, 'usage', u.usage, 'preferences', u.preferences,
                                               'updated_at', u.updated_at)
                       from user_context u where u.user_id = p_user_id)
  )
$$;

do $$
begin
  revoke all on function export_user_data(text) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function export_user_data(text) from anon, authenticated;
  end if;
end;
$$;
