/*
 * VestaVectors: IDs made and explained by Vesta's own classes, for
 * t/082_vesta.pl to compare with idgen's.  Reimplements nothing: every
 * number printed comes from a Vesta class (IdConverterImpl, IdMetaFactory,
 * IdType, Id, AbstractIdServiceImpl.makeId/expId/transTime, IdServiceImpl
 * with its LockIdPopulator), compiled from a Vesta checkout at test time and
 * never kept in this repository.  Only the UTC text of transTime's Date is
 * formatted here (Vesta prints Date.toString(), in the JVM's zone).
 *
 *   java VestaVectors COUNT SEED
 *
 * Prints tab-separated lines:
 *   make  TYPE  VERSION  METHOD  TIME  SEQ  MACHINE  ID  MAKEID  UNIX-MS  UTC-TEXT
 *     ID is IdConverterImpl(type).convert(new Id(...)), MAKEID is
 *     makeId(version, type, genMethod, time, seq, machine), UNIX-MS and
 *     UTC-TEXT are transTime(time) of a service of that type (UTC-TEXT in
 *     idgen's friendly form: 14 digits for max-peak, 17 for min-granularity,
 *     then -machine-seq).
 *   decode  TYPE  LONG  MACHINE  SEQ  TIME  METHOD  TYPEFIELD  VERSION  EXPLAIN
 *     IdConverterImpl(type).convert(LONG), EXPLAIN being Vesta's
 *     Id.toString().
 *   generated  TYPE  METHOD  MACHINE  ID  SEQ  TIME  UNIX-MS
 *     genId() of an IdServiceImpl of that type and genMethod, machine
 *     MACHINE, with Vesta's default LockIdPopulator and clock.
 * TYPE is 0 (max-peak) or 1 (min-granularity), as IdType.value().
 */
import java.text.SimpleDateFormat;
import java.util.Random;
import java.util.TimeZone;

import com.robert.vesta.service.bean.Id;
import com.robert.vesta.service.impl.AbstractIdServiceImpl;
import com.robert.vesta.service.impl.IdServiceImpl;
import com.robert.vesta.service.impl.bean.IdMeta;
import com.robert.vesta.service.impl.bean.IdMetaFactory;
import com.robert.vesta.service.impl.bean.IdType;
import com.robert.vesta.service.impl.converter.IdConverterImpl;
import com.robert.vesta.service.impl.provider.MachineIdProvider;

public class VestaVectors {
    static IdServiceImpl service(IdType type, final long machine, long genMethod) {
        IdServiceImpl s = new IdServiceImpl(type);
        s.setMachineIdProvider(new MachineIdProvider() {
            public long getMachineId() { return machine; }
        });
        s.setGenMethod(genMethod);
        s.init();
        return s;
    }

    static String utc(AbstractIdServiceImpl s, IdType type, long time) {
        SimpleDateFormat f = new SimpleDateFormat(
            type == IdType.MAX_PEAK ? "yyyyMMddHHmmss" : "yyyyMMddHHmmssSSS");
        f.setTimeZone(TimeZone.getTimeZone("UTC"));
        return f.format(s.transTime(time));
    }

    static long mask(int bits) { return -1L ^ -1L << bits; }

    public static void main(String[] args) {
        int count = Integer.parseInt(args[0]);
        Random rnd = new Random(Long.parseLong(args[1]));
        IdType[] types = {IdType.MAX_PEAK, IdType.MIN_GRANULARITY};
        for (IdType type : types) {
            IdMeta meta = IdMetaFactory.getIdMeta(type);
            IdConverterImpl conv = new IdConverterImpl(type);
            IdServiceImpl svc = service(type, 0, 0);
            for (int i = 0; i < count; i++) {
                long version = i % 10 == 9 ? 1 : 0;
                long method = i % 3;
                long time, seq, machine;
                if (i < 3) {            /* all zero, all ones, small values */
                    time = i == 0 ? 0 : i == 1 ? mask(meta.getTimeBits()) : 1;
                    seq = i == 0 ? 0 : i == 1 ? mask(meta.getSeqBits()) : 3;
                    machine = i == 0 ? 0 : i == 1 ? mask(meta.getMachineBits()) : 2;
                } else {
                    time = rnd.nextLong() & mask(meta.getTimeBits());
                    seq = rnd.nextLong() & mask(meta.getSeqBits());
                    machine = rnd.nextLong() & mask(meta.getMachineBits());
                }
                Id id = new Id(machine, seq, time, method, type.value(), version);
                long l = conv.convert(id);
                long made = svc.makeId(version, type.value(), method, time, seq, machine);
                System.out.println("make\t" + type.value() + "\t" + version + "\t" + method + "\t"
                    + time + "\t" + seq + "\t" + machine + "\t" + l + "\t" + made + "\t"
                    + svc.transTime(time).getTime() + "\t" + utc(svc, type, time) + "-" + machine
                    + "-" + seq);
            }
            for (int i = 0; i < count; i++) {
                /* any long: Vesta explains them all, of either type bit,
                 * method 3 and version 1 included */
                long l = i == 0 ? 0 : i == 1 ? Long.MAX_VALUE : i == 2 ? -1L : rnd.nextLong();
                Id id = conv.convert(l);
                Id exp = svc.expId(l);
                if (!id.toString().equals(exp.toString()))
                    throw new IllegalStateException("expId and convert differ on " + l);
                System.out.println("decode\t" + type.value() + "\t" + l + "\t" + id.getMachine() + "\t"
                    + id.getSeq() + "\t" + id.getTime() + "\t" + id.getGenMethod() + "\t"
                    + id.getType() + "\t" + id.getVersion() + "\t" + id);
            }
            for (long method = 0; method < 3; method++) {
                long machine = 17 + 300 * method;
                IdServiceImpl g = service(type, machine, method);
                for (int i = 0; i < 3; i++) {
                    long l = g.genId();
                    Id id = g.expId(l);
                    System.out.println("generated\t" + type.value() + "\t" + method + "\t" + machine
                        + "\t" + l + "\t" + id.getSeq() + "\t" + id.getTime() + "\t"
                        + g.transTime(id.getTime()).getTime());
                }
            }
        }
    }
}
