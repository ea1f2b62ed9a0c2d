-- The Agent Server API's store, as LangGraph documents it (graph/agent-server/store-items.ts): any
-- JSON object under any namespace of the caller's own (each user's items are theirs alone: the user
-- is the root of every namespace they name), found by key, by prefix and filter, or by meaning on
-- the fields the item was indexed on. The ["memories", ...] namespace stays the memories table's.
-- Idempotent: the local stack applies every migration at each boot.

create table if not exists agent_store_items (
  user_id    text   not null,
  namespace  text[] not null check (cardinality(namespace) between 1 and 10),
  key        text   not null,
  value      jsonb  not null check (jsonb_typeof(value) = 'object'),
  -- The indexed fields' text, embedded; null when the item was put with index: false.
  embedding  vector(1024),
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  primary key (user_id, namespace, key)
);
create index if not exists agent_store_items_embedding
  on agent_store_items using hnsw (embedding vector_cosine_ops);
alter table agent_store_items enable row level security;

-- Puts an item: a new one, or a new value (and embedding) for the key, its creation time kept.
create or replace function store_put_item(
  p_user_id   text,
  p_namespace text[],
  p_key       text,
  p_value     jsonb,
  p_embedding vector(1024)
) returns void
language sql
set search_path = public
as $$
  insert into agent_store_items (user_id, namespace, key, value, embedding)
  values (p_user_id, p_namespace, p_key, p_value, p_embedding)
  on conflict (user_id, namespace, key) do update
    set value = excluded.value, embedding = excluded.embedding, updated_at = clock_timestamp();
$$;

create or replace function store_get_item(p_user_id text, p_namespace text[], p_key text)
returns table (namespace text[], key text, value jsonb, created_at timestamptz, updated_at timestamptz)
language sql
stable
set search_path = public
as $$
  select i.namespace, i.key, i.value, i.created_at, i.updated_at
    from agent_store_items i
   where i.user_id = p_user_id and i.namespace = p_namespace and i.key = p_key;
$$;

create or replace function store_delete_item(p_user_id text, p_namespace text[], p_key text) returns boolean
language sql
set search_path = public
as $$
  with gone as (
    delete from agent_store_items i
     where i.user_id = p_user_id and i.namespace = p_namespace and i.key = p_key
    returning 1)
  select exists (select 1 from gone);
$$;

-- The user's items under a namespace prefix whose value holds each entry of p_filter (equal at its
-- key); with a query embedding, the indexed ones, nearest first, scored by cosine similarity;
-- without, the newest first.
create or replace function store_search_items(
  p_user_id         text,
  p_prefix          text[],
  p_filter          jsonb,
  p_query_embedding vector(1024),
  p_limit           int,
  p_offset          int
) returns table (namespace text[], key text, value jsonb, created_at timestamptz, updated_at timestamptz,
                 score double precision)
language sql
stable
set search_path = public
as $$
  select i.namespace, i.key, i.value, i.created_at, i.updated_at,
         case when p_query_embedding is null then null else 1 - (i.embedding <=> p_query_embedding) end
    from agent_store_items i
   where i.user_id = p_user_id
     and i.namespace[1:cardinality(p_prefix)] = p_prefix
     and (p_filter is null or not exists (
           select 1 from jsonb_each(p_filter) f where (i.value -> f.key) is distinct from f.value))
     and (p_query_embedding is null or i.embedding is not null)
   order by case when p_query_embedding is null then null else i.embedding <=> p_query_embedding end,
            i.updated_at desc, i.namespace, i.key
   limit least(greatest(p_limit, 1), 1000)
  offset greatest(p_offset, 0);
$$;

-- The user's namespaces (cut to p_max_depth labels when given) that start with p_prefix and end
-- with p_suffix, in order. One JSON array of arrays: a set of text[] would read differently over
-- PostgREST and SQL.
create or replace function store_list_namespaces(
  p_user_id   text,
  p_prefix    text[],
  p_suffix    text[],
  p_max_depth int,
  p_limit     int,
  p_offset    int
) returns jsonb
language sql
stable
set search_path = public
as $$
  select coalesce(jsonb_agg(to_jsonb(ns) order by ns), '[]'::jsonb)
    from (
      select distinct case when p_max_depth is null then i.namespace else i.namespace[1:p_max_depth] end as ns
        from agent_store_items i
       where i.user_id = p_user_id
         and i.namespace[1:cardinality(p_prefix)] = p_prefix
         and (cardinality(p_suffix) = 0
              or i.namespace[cardinality(i.namespace) - cardinality(p_suffix) + 1:] = p_suffix)
       order by 1
       limit least(greatest(p_limit, 1), 1000)
      offset greatest(p_offset, 0)
    ) namespaces;
$$;

revoke all on function store_put_item(text, text[], text, jsonb, vector) from public;
revoke all on function store_get_item(text, text[], text) from public;
revoke all on function store_delete_item(text, text[], text) from public;
revoke all on function store_search_items(text, text[], jsonb, vector, int, int) from public;
revoke all on function store_list_namespaces(text, text[], text[], int, int, int) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function store_put_item(text, text[], text, jsonb, vector) from anon, authenticated;
    revoke all on function store_get_item(text, text[], text) from anon, authenticated;
    revoke all on function store_delete_item(text, text[], text) from anon, authenticated;
    revoke all on function store_search_items(text, text[], jsonb, vector, int, int) from anon, authenticated;
    revoke all on function store_list_namespaces(text, text[], text[], int, int, int) from anon, authenticated;
  end if;
end;
$$;

-- A user's store items in their export and their erasure (012_user_data.sql's functions cover the
-- tables before this one; the user-data store calls these beside them: shared/stores/user-data.ts).
create or replace function erase_agent_store_items(p_user_id text) returns int
language sql
set search_path = public
as $$
  with gone as (delete from agent_store_items where user_id = p_user_id returning 1)
  select count(*)::int from gone
$$;

create or replace function export_agent_store_items(p_user_id text) returns jsonb
language sql
stable
set search_path = public
as $$
  select coalesce(jsonb_agg(jsonb_build_object('namespace', to_jsonb(i.namespace), 'key', i.key, 'value', i.value,
                                               'created_at', i.created_at, 'updated_at', i.updated_at)
                            order by i.namespace, i.key), '[]'::jsonb)
    from agent_store_items i
   where i.user_id = p_user_id
$$;

revoke all on function erase_agent_store_items(text) from public;
revoke all on function export_agent_store_items(text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function erase_agent_store_items(text) from anon, authenticated;
    revoke all on function export_agent_store_items(text) from anon, authenticated;
  end if;
end;
$$;
