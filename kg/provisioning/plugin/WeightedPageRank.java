package strata.ppr;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.stream.Stream;

import org.neo4j.gds.NodeLabel;
import org.neo4j.gds.api.Graph;
import org.neo4j.gds.api.GraphStore;
import org.neo4j.gds.core.loading.GraphStoreCatalog;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.security.SecurityContext;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;
import org.neo4j.procedure.TerminationGuard;

/**
 * Personalised PageRank with a weighted restart vector, in one run, over a GDS in-memory projection.
 *
 * <p>Why Strata ships this: GDS 2.13 (the last GDS line for Neo4j 5.26) takes source nodes without weights, so
 * a weighted restart needed one gds.pageRank run per group of seeds, and every run's Pregel supersteps visit
 * every node of the graph: its cost grows with the graph, not with the seeds' neighbourhood. This is the push
 * that Strata's other engines run (kg/retrieval/methods/ppr.py, local_pagerank and MemoryGraph.pagerank): each
 * seed starts with (1 - damping) * weight; a node whose newly received mass exceeds the tolerance passes
 * damping * mass * w / degree along each relationship of weight w (degree: the sum of its relationships'
 * weights), for at most the given number of iterations. It reads the projection GDS holds in its catalog for the
 * calling user and database; nothing is written.
 */
public final class WeightedPageRank {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    @Context
    public SecurityContext security;

    @Context
    public TerminationGuard guard;

    /** A ranked node and its PageRank mass. */
    public static final class Ranked {
        public final Node node;
        public final double score;

        Ranked(Node node, double score) {
            this.node = node;
            this.score = score;
        }
    }

    @Procedure(name = "strata.ppr.stream", mode = Mode.READ)
    @Description("strata.ppr.stream(graph, sources, weights, damping, iterations, tolerance, label, depth): the "
            + "`depth` nodes with `label` of most personalised PageRank mass on the GDS projection `graph`, the "
            + "restart at each source node weighted by the weight at the same position.")
    public Stream<Ranked> stream(@Name("graph") String graphName, @Name("sources") List<Node> sources,
                                 @Name("weights") List<Double> weights, @Name("damping") double damping,
                                 @Name("iterations") long iterations, @Name("tolerance") double tolerance,
                                 @Name("label") String label, @Name("depth") long depth) {
        if (sources.size() != weights.size()) {
            throw new IllegalArgumentException("sources and weights differ in length: " + sources.size()
                    + " and " + weights.size());
        }
        GraphStore store = GraphStoreCatalog.get(security.subject().executingUser(), db.databaseName(), graphName)
                .graphStore();
        Graph graph = store.getGraph(store.nodeLabels(), store.relationshipTypes(), Optional.of("weight"))
                .concurrentCopy();
        double[] degrees = weightedDegrees(store, graph);
        Push push = new Push(degrees.length);
        for (int i = 0; i < sources.size(); i++) {
            long node = graph.safeToMappedNodeId(sources.get(i).getId());
            double weight = weights.get(i);
            if (node >= 0 && weight > 0) {
                push.receive((int) node, (1 - damping) * weight);
            }
        }
        for (long step = 0; step < iterations && push.advance(); step++) {
            guard.check();
            for (int k = 0; k < push.delta.size; k++) {
                int node = push.delta.nodes[k];
                double mass = push.delta.mass[node];
                if (mass <= tolerance || degrees[node] <= 0) {
                    continue;
                }
                double share = damping * mass / degrees[node];
                graph.forEachRelationship(node, 1.0, (source, target, weight) -> {
                    push.receive((int) target, share * weight);
                    return true;
                });
            }
        }
        push.advance();
        // The best `depth` in a bounded heap: a hub entity's push can reach most of the graph's chunks, and only
        // `depth` of them are wanted.
        NodeLabel wanted = NodeLabel.of(label);
        int keep = Math.toIntExact(Math.max(depth, 0));
        PriorityQueue<Scored> best = new PriorityQueue<>(Comparator.comparingDouble(Scored::score));
        for (int k = 0; k < push.rankedSize; k++) {
            int node = push.ranked[k];
            double mass = push.rank[node];
            if (keep == 0 || mass <= 0 || (best.size() == keep && mass <= best.peek().score())
                    || !graph.hasLabel(node, wanted)) {
                continue;
            }
            if (best.size() == keep) {
                best.poll();
            }
            best.add(new Scored(node, mass));
        }
        List<Scored> ranked = new ArrayList<>(best);
        ranked.sort(Comparator.comparingDouble(Scored::score).reversed());
        return ranked.stream().map(n -> new Ranked(tx.getNodeById(graph.toOriginalNodeId(n.node)), n.score));
    }

    private record Scored(long node, double score) {
    }

    /**
     * Masses over GDS node ids in dense arrays, with the list of the nodes each holds, so that an iteration
     * visits only the nodes it reached (a hub entity's push reaches most chunks: primitive hash maps cost about
     * as much as the rest of the query at 100k passages). {@code next} gathers what this iteration passes on;
     * {@link #advance} adds it to {@code rank} and makes it the {@code delta} the next iteration passes on.
     */
    private static final class Push {
        final double[] rank;
        int[] ranked = new int[64];  // the nodes with mass in rank, in the order first reached
        int rankedSize;
        Frontier delta;
        Frontier next;

        Push(int nodes) {
            rank = new double[nodes];
            delta = new Frontier(nodes);
            next = new Frontier(nodes);
        }

        void receive(int node, double mass) {
            next.add(node, mass);
        }

        /** Whether the last iteration passed any mass on (the next one has something to push). */
        boolean advance() {
            delta.clear();
            Frontier passed = next;
            next = delta;
            delta = passed;
            for (int k = 0; k < delta.size; k++) {
                int node = delta.nodes[k];
                if (delta.mass[node] <= 0) {  // reached only along relationships of weight 0
                    continue;
                }
                if (rank[node] == 0) {
                    if (rankedSize == ranked.length) {
                        ranked = Arrays.copyOf(ranked, rankedSize * 2);
                    }
                    ranked[rankedSize++] = node;
                }
                rank[node] += delta.mass[node];
            }
            return delta.size > 0;
        }
    }

    /** Masses of some nodes: a dense array and the nodes set in it, in the order first set. */
    private static final class Frontier {
        final double[] mass;
        final boolean[] held;
        int[] nodes = new int[64];
        int size;

        Frontier(int nodes) {
            mass = new double[nodes];
            held = new boolean[nodes];
        }

        void add(int node, double value) {
            if (!held[node]) {
                held[node] = true;
                if (size == nodes.length) {
                    nodes = Arrays.copyOf(nodes, size * 2);
                }
                nodes[size++] = node;
            }
            mass[node] += value;
        }

        void clear() {
            for (int k = 0; k < size; k++) {
                mass[nodes[k]] = 0;
                held[nodes[k]] = false;
            }
            size = 0;
        }
    }

    /**
     * Each node's weighted degree (the sum of its relationships' weights), indexed by GDS node id: computed once
     * per projection and kept while the projection is the last one asked for (a projection never changes: a
     * changed graph is a new projection under a new name).
     */
    private static double[] weightedDegrees(GraphStore store, Graph graph) {
        Degrees held = lastDegrees;
        if (held != null && held.store.get() == store) {
            return held.degrees;
        }
        double[] degrees = new double[Math.toIntExact(graph.nodeCount())];
        for (int node = 0; node < degrees.length; node++) {
            degrees[node] = weightedDegree(graph, node);
        }
        lastDegrees = new Degrees(new WeakReference<>(store), degrees);
        return degrees;
    }

    private record Degrees(WeakReference<GraphStore> store, double[] degrees) {
    }

    private static volatile Degrees lastDegrees;

    private static double weightedDegree(Graph graph, long node) {
        double[] sum = {0.0};
        graph.forEachRelationship(node, 1.0, (source, target, weight) -> {
            sum[0] += weight;
            return true;
        });
        return sum[0];
    }
}
