package strata.ppr;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.stream.Stream;

import org.eclipse.collections.impl.map.mutable.primitive.LongDoubleHashMap;

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
        LongDoubleHashMap rank = new LongDoubleHashMap();
        for (int i = 0; i < sources.size(); i++) {
            long node = graph.safeToMappedNodeId(sources.get(i).getId());
            double weight = weights.get(i);
            if (node >= 0 && weight > 0) {
                rank.addToValue(node, (1 - damping) * weight);
            }
        }
        LongDoubleHashMap delta = new LongDoubleHashMap(rank);
        for (long step = 0; step < iterations; step++) {
            guard.check();
            LongDoubleHashMap next = new LongDoubleHashMap();
            delta.forEachKeyValue((node, mass) -> {
                double degree = degrees[(int) node];
                if (mass <= tolerance || degree <= 0) {
                    return;
                }
                double share = damping * mass / degree;
                graph.forEachRelationship(node, 1.0, (source, target, weight) -> {
                    next.addToValue(target, share * weight);
                    return true;
                });
            });
            if (next.isEmpty()) {
                break;
            }
            next.forEachKeyValue(rank::addToValue);
            delta = next;
        }
        // The best `depth` by a bounded heap: a hub entity's push can reach most of the graph's chunks, and
        // sorting all of them cost more than the push.
        NodeLabel wanted = NodeLabel.of(label);
        int keep = Math.toIntExact(Math.max(depth, 0));
        PriorityQueue<Scored> best = new PriorityQueue<>(Comparator.comparingDouble(Scored::score));
        rank.forEachKeyValue((node, mass) -> {
            if (keep == 0 || mass <= 0 || (best.size() == keep && mass <= best.peek().score())
                    || !graph.hasLabel(node, wanted)) {
                return;
            }
            if (best.size() == keep) {
                best.poll();
            }
            best.add(new Scored(node, mass));
        });
        List<Scored> ranked = new ArrayList<>(best);
        ranked.sort(Comparator.comparingDouble(Scored::score).reversed());
        return ranked.stream().map(n -> new Ranked(tx.getNodeById(graph.toOriginalNodeId(n.node)), n.score));
    }

    private record Scored(long node, double score) {
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
