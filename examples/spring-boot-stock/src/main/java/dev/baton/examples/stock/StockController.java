package dev.baton.examples.stock;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /stock/{item}/take}: 200 with the count left, 409 when sold out or the lease was lost. */
@RestController
public class StockController {
    private final Stock stock;

    public StockController(Stock stock) {
        this.stock = stock;
    }

    @PostMapping("/stock/{item}/take")
    public ResponseEntity<String> take(@PathVariable("item") String item) {
        return stock.take(item)
                .map(left -> ResponseEntity.ok(left + " left"))
                .orElseGet(() -> ResponseEntity.status(HttpStatus.CONFLICT).body("sold out"));
    }

    @ExceptionHandler(Stock.StaleLeaseException.class)
    public ResponseEntity<String> stale(Stock.StaleLeaseException e) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(e.getMessage());
    }

    @ExceptionHandler(IllegalArgumentException.class)
    public ResponseEntity<String> unknown(IllegalArgumentException e) {
        return ResponseEntity.status(HttpStatus.NOT_FOUND).body(e.getMessage());
    }
}
