import type { ToolDefinition } from './types.ts';

/**
 * Name of the lazy-retrieval tool the agent receives at session start. (In core so that the
 * client-side integrations, such as memgate/livekit, describe the tool exactly as the server does.)
 */
export const MEMORY_SEARCH_TOOL = 'memory_search';

/** Most results one call may ask for (the cascade's reply stays small enough for a voice turn). */
export const MEMORY_SEARCH_MAX_K = 20;

/**
 * The `memory_search` tool in OpenAI function-calling format (docs/design.md §1, paper §7.2).
 * The description is the lazy-retrieval policy: the model calls it only when the
 * preloaded context is not enough, so "thanks, goodbye" costs no search.
 */
export function memorySearchTool(): ToolDefinition {
  return {
    type: 'function',
    function: {
      name: MEMORY_SEARCH_TOOL,
      description:
        'Search long-term memory of earlier conversations with this user. Call it ONLY when the user refers to a ' +
        'past conversation, asks about something decided or said before, or the memory already given in your ' +
        'instructions does not contain the answer. Do not call it for greetings, small talk, or facts already ' +
        'listed there. Results carry a confidence (high/medium/low): state high ones, hedge or confirm low ones.',
      parameters: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            description: 'What to look up, as a short standalone phrase with names and dates spelled out (e.g. "budget for the Baner flat").',
          },
          k: {
            type: 'integer',
            minimum: 1,
            maximum: MEMORY_SEARCH_MAX_K,
            description: 'How many results to return (default 5).',
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
  };
}
