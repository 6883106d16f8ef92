/**
 * A query cost limit, as a GraphQL validation rule: every field costs 1, and a list field's selection
 * counts once per item it may return (its `first` argument; 50 when left out, 200 when a variable
 * gives it, the most a page can hold). A query whose cost is over the limit is refused before it
 * runs, whatever its depth: ten aliases of a 200-item list nested in another are caught.
 */
import { GraphQLError, Kind, type ASTVisitor, type ArgumentNode, type SelectionSetNode, type ValidationContext } from 'graphql'

export const DEFAULT_PAGE_COST = 50
export const MAX_PAGE_COST = 200

/** The items a paged field may return: its literal `first`, 50 without one, 200 when a variable gives it. */
function pageSize (args: readonly ArgumentNode[] | undefined): number {
  const first = args?.find((a) => a.name.value === 'first')
  if (first === undefined) return DEFAULT_PAGE_COST
  if (first.value.kind === Kind.INT) return Math.min(MAX_PAGE_COST, Math.max(1, Number(first.value.value)))
  return MAX_PAGE_COST
}

/** List fields that take `first` (connections): the rest of the schema's lists are bounded by these. */
const PAGED = new Set(['agentEndpoints', 'policies', 'events', 'evaluations'])

export function costLimit (max: number): (context: ValidationContext) => ASTVisitor {
  return (context) => {
    const cost = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
      if (set === undefined) return 0
      let total = 0
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          const times = PAGED.has(s.name.value) ? pageSize(s.arguments) : 1
          total += 1 + times * cost(s.selectionSet, seen)
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          total += cost(s.selectionSet, seen)
        } else {
          const name = s.name.value
          if (seen.has(name)) continue // a cycle is reported by graphql's own rule
          const fragment = context.getFragment(name)
          total += cost(fragment?.selectionSet, new Set([...seen, name]))
        }
        if (total > max) return total
      }
      return total
    }
    return {
      OperationDefinition (node) {
        const total = cost(node.selectionSet, new Set())
        if (total > max) {
          context.reportError(new GraphQLError(`query cost ${total > max * 10 ? `over ${max * 10}` : total} is over the limit of ${max}: ask for smaller pages or fewer fields`, { nodes: [node], extensions: { code: 'QUERY_TOO_COSTLY' } }))
        }
      }
    }
  }
}
