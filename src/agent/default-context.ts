// The context.yaml a new agent starts from: its system prompt, the workspace's DELTA.md when there is one, and the journal.
export const DEFAULT_CONTEXT_YAML = `sources:
  - type: file
    id: system_prompt
    path: '\${AGENT_HOME}/system_prompt.md'
  - type: file
    id: workspace_guide
    path: '\${CWD}/DELTA.md'
    on_missing: skip
  - type: journal
    id: conversation_history
`;
