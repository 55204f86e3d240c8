package offsetlake.decode;

import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;

/**
 * A Spark SQL function {@code f(key, value)} that decodes a raw {@code __consumer_offsets} record with
 * Kafka's own generated classes into a struct, or null when it does not decode the record exactly
 * (the Python decoders take those). The Catalyst plumbing shared by {@link OffsetCommitExpression} and
 * {@link GroupMetadataExpression}; each subclass gives its name, its result type and its decode.
 *
 * <p>Why a Catalyst expression and not a UDF: a UDF returning a {@code Row} pays Spark's
 * Row-to-InternalRow conversion per record, schema-driven and as costly as Kafka's decode itself on
 * commits (recorded in CHANGELOG.md), and far more on GroupMetadata's nested members. An expression builds
 * the InternalRow directly ({@link #row}) and generates code that calls the decode without leaving
 * whole-stage code generation.
 *
 * <p>It reports itself nondeterministic: otherwise the optimizer may push a filter on the result below
 * the projection that computes it, or inline the struct into each field read (CollapseProject), and the
 * decode would run more than once per record.
 */
abstract class RecordDecodeExpression extends Expression implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** A record's decode as generated code calls it (Spark's own scala.Function2, which its compiler sees). */
    abstract static class Decode extends AbstractFunction2<byte[], byte[], InternalRow> implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
    }

    private final Expression key;
    private final Expression value;
    private final Seq<Expression> children;

    RecordDecodeExpression(Expression key, Expression value) {
        this.key = key;
        this.value = value;
        this.children = CollectionConverters.asScala(List.of(key, value)).toSeq();
    }

    /** The function's name in SQL. */
    abstract String name();

    /** The decode: the record's struct, or null when it is not decoded exactly. Never throws. */
    abstract Decode decode();

    /** This expression over other children (Catalyst rewrites the tree). */
    abstract RecordDecodeExpression withChildren(Expression key, Expression value);

    /** Registers {@code name(key, value)} in the session's function registry (idempotent). */
    static void register(SparkSession session, String name, BiFunction<Expression, Expression, Expression> make) {
        registerFunction(session, name, "(key, value)", 2, args -> make.apply(args.get(0), args.get(1)));
    }

    /**
     * Registers the SQL function {@code name} (idempotent): {@code make} builds its expression from exactly
     * {@code arity} arguments, whose names {@code signature} gives in the error for any other count.
     */
    static void registerFunction(SparkSession session, String name, String signature, int arity,
                                 Function<List<Expression>, Expression> make) {
        session.sessionState().functionRegistry().createOrReplaceTempFunction(name,
                new AbstractFunction1<Seq<Expression>, Expression>() {
                    @Override
                    public Expression apply(Seq<Expression> arguments) {
                        List<Expression> args = CollectionConverters.asJava(arguments);
                        if (args.size() != arity) {
                            throw new IllegalArgumentException(name + " takes " + arity + " argument"
                                    + (arity == 1 ? "" : "s") + " " + signature + ", got " + args.size());
                        }
                        return make.apply(args);
                    }
                }, "scala_udf");
    }

    /**
     * A struct value from its fields in schema order, as Catalyst holds it: strings as UTF8String, lists
     * as ArrayData of the same conversion (a list of Integers as a primitive int array); numbers,
     * booleans, byte[], InternalRow and null as they are.
     */
    static InternalRow row(Object... fields) {
        for (int i = 0; i < fields.length; i++) {
            fields[i] = catalyst(fields[i]);
        }
        return new GenericInternalRow(fields);
    }

    private static Object catalyst(Object value) {
        // Most fields are numbers, rows or null: tested first, by class, before the interface List
        // (a JFR profile of the bench's GroupMetadata decode spent a tenth of it in this method).
        if (value == null || value instanceof Number || value instanceof InternalRow || value instanceof Boolean
                || value instanceof byte[]) {
            return value;
        }
        if (value instanceof String s) {
            return UTF8String.fromString(s);
        }
        if (value instanceof List<?> list) {
            return array(list);
        }
        return value;
    }

    private static ArrayData array(List<?> list) {
        int size = list.size();
        if (size > 0 && list.get(0) instanceof Integer) {
            int[] ints = new int[size];
            for (int i = 0; i < size; i++) {
                if (!(list.get(i) instanceof Integer item)) {
                    return boxed(list);
                }
                ints[i] = item;
            }
            return UnsafeArrayData.fromPrimitiveArray(ints);  // array<int> without a box per element
        }
        return boxed(list);
    }

    private static ArrayData boxed(List<?> list) {
        Object[] items = new Object[list.size()];
        for (int i = 0; i < items.length; i++) {
            items[i] = catalyst(list.get(i));
        }
        return new GenericArrayData(items);
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public boolean foldable() {
        return false;
    }

    @Override
    public boolean nullable() {
        return true;
    }

    @Override
    public boolean deterministic() {
        return false;
    }

    @Override
    public String prettyName() {
        return name();
    }

    @Override
    public Object eval(InternalRow input) {
        Object k = key.eval(input);
        if (k == null) {
            return null;
        }
        return decode().apply((byte[]) k, (byte[]) value.eval(input));
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        String decode = ctx.addReferenceObj(name() + "Decode", decode(), "scala.Function2");
        ExprCode k = key.genCode(ctx);
        ExprCode v = value.genCode(ctx);
        String code = k.code() + "\n" + v.code() + "\n"
                + "InternalRow " + ev.value() + " = " + k.isNull() + " ? null : (InternalRow) " + decode
                + ".apply(" + k.value() + ", " + v.isNull() + " ? null : " + v.value() + ");\n"
                + "boolean " + ev.isNull() + " = " + ev.value() + " == null;\n";
        return withCode(ev, code);
    }

    /** {@code ev} with {@code code} (Java source declaring its isNull and value) as its code block. */
    static ExprCode withCode(ExprCode ev, String code) {
        CodeBlock block = new CodeBlock(CollectionConverters.asScala(List.of(code)).toSeq(),
                CollectionConverters.asScala(List.<JavaCode>of()).toSeq());
        return ev.copy(block, ev.isNull(), ev.value());
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return withChildren(newChildren.apply(0), newChildren.apply(1));
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        if (n == 0) {
            return key;
        }
        if (n == 1) {
            return value;
        }
        throw new IndexOutOfBoundsException(Integer.toString(n));
    }

    @Override
    public boolean canEqual(Object other) {
        return other != null && other.getClass() == getClass();
    }

    @Override
    public boolean equals(Object other) {
        return canEqual(other) && key.equals(((RecordDecodeExpression) other).key)
                && value.equals(((RecordDecodeExpression) other).value) && dataType().equals(((Expression) other).dataType());
    }

    @Override
    public int hashCode() {
        return 31 * (31 * key.hashCode() + value.hashCode()) + getClass().hashCode();
    }
}
